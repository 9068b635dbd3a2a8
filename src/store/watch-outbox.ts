import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { Store } from './store.js';
import { watchKey } from './watch-keys.js';

// The per-target outbox of the watchers: what is to be said in a channel (or a person's DM), in order.
// Producers append entries; one drain job at a time per target (it holds a lease) sends them at the
// pace Slack allows and takes each off the list only once Slack accepted it, so a burst is queued, a
// crash resends rather than drops, and order is kept. Entries are validated on read: they outlive deploys.
//
// Keys (all under <prefix>:{watch}:):
//   outbox:<target>   list of JSON entries, oldest first
//   drainer:<target>  the lease: token of the drain job that may send, with a time to live
//   targets           set of targets with entries pending (the tick re-kicks a drain a crash left behind)
//   refs:<target>     hash: name → ts of a message we post and later edit or reply under
//   paced:<target>    unix ms before which nothing more may be sent to the target
//   blob:<id>         bytes of a file to upload (an idle alert's chart), kept a day

/** A message: posted, or edited in place when `mode` is upsert and its `ref` already has a ts. */
export const outboxMessageSchema = z.object({
  id: z.string().min(1),
  op: z.literal('message'),
  mode: z.enum(['post', 'upsert']),
  /** Name under which the message's ts is remembered (and looked up for upsert). */
  ref: z.string().min(1).optional(),
  /** Post as a reply in the thread of this ref (top-level when the ref is unknown). */
  thread: z.string().min(1).optional(),
  text: z.string(),
  blocks: z.array(z.unknown()).optional(),
  /** Forget `thread` (or `ref`) once sent: the resource is gone and never edited again. */
  forget: z.boolean().optional(),
  /** What kind of notice it is, for the count of those Slack refused (`budget-alert`). */
  tag: z.literal('budget-alert').optional(),
});

/** A file (a PNG chart), uploaded with files.uploadV2. */
export const outboxFileSchema = z.object({
  id: z.string().min(1),
  op: z.literal('file'),
  blob: z.string().min(1),
  filename: z.string().min(1),
  title: z.string(),
  alt: z.string(),
  comment: z.string().optional(),
  thread: z.string().min(1).optional(),
  tag: z.literal('budget-alert').optional(),
});

export const outboxEntrySchema = z.discriminatedUnion('op', [outboxMessageSchema, outboxFileSchema]);
export type OutboxEntry = z.infer<typeof outboxEntrySchema>;
export type OutboxMessage = z.infer<typeof outboxMessageSchema>;
export type OutboxFile = z.infer<typeof outboxFileSchema>;
/** An entry before it gets its id. */
export type NewOutboxEntry = DistributiveOmit<OutboxEntry, 'id'>;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** How long a drain may go silent before its lease lapses and another drain may take over. */
export const DRAIN_LEASE_MS = 120_000;
const BLOB_TTL_SECONDS = 24 * 3600;
const REFS_TTL_SECONDS = 90 * 86_400;
/** The ref under which a DM target's conversation id (D…) is remembered. */
export const CHANNEL_REF = '#channel';

/** One entry at the head of an outbox: the raw text identifies it for the pop. */
export interface OutboxHead {
  readonly raw: string;
  /** Undefined when the entry is from an unreadable (older or newer) version: it is skipped. */
  readonly entry: OutboxEntry | undefined;
}

export type LeaseCheck = 'held' | 'lost';

export interface Outbox {
  /** Appends entries for one target; returns a drain token when no drain holds the target yet. */
  push(target: string, entries: readonly NewOutboxEntry[]): Promise<string | undefined>;
  /** Appends the same entries to many targets at once (one atomic step); returns the drains to start. */
  pushMany(
    targets: readonly string[],
    entries: readonly NewOutboxEntry[],
  ): Promise<Array<{ target: string; token: string }>>;
  head(target: string): Promise<OutboxHead | undefined>;
  /** Removes the head entry if it is still `raw` and `token` holds the lease. */
  pop(target: string, token: string, raw: string): Promise<boolean>;
  /** Renews the lease; 'lost' when another drain holds it now. */
  hold(target: string, token: string): Promise<LeaseCheck>;
  /** Ends the lease when the outbox is empty: 'released', or 'more' (entries arrived), or 'lost'. */
  release(target: string, token: string): Promise<'released' | 'more' | 'lost'>;
  /** Hands the lease to a new drain (a delayed one after a 429); false when not held. */
  hand(target: string, token: string, next: string, leaseMs: number): Promise<boolean>;
  /** A new drain token for a target with pending entries and no live lease (crash recovery). */
  kick(target: string): Promise<string | undefined>;
  /** Targets with entries pending. */
  targets(): Promise<string[]>;
  pending(target: string): Promise<number>;
  ref(target: string, name: string): Promise<string | undefined>;
  setRef(target: string, name: string, ts: string): Promise<void>;
  forget(target: string, name: string): Promise<void>;
  /** Unix ms before which the target must not be sent to. */
  notBefore(target: string): Promise<number>;
  setNotBefore(target: string, at: number): Promise<void>;
  putBlob(bytes: Buffer): Promise<string>;
  blob(id: string): Promise<Buffer | undefined>;
}

/** A drain token, also the drain job's id (BullMQ ids have no ':'). */
export function newDrainToken(): string {
  return `drain-${randomBytes(9).toString('base64url')}`;
}

/** Ids for a batch of entries: one random part per batch (a large look writes a summary and its thread pages), then a count. */
function newEntryIds(count: number): string[] {
  const batch = randomBytes(9).toString('base64url');
  return Array.from({ length: count }, (_, i) => `${batch}.${i}`);
}

// Appends ARGV entries to every target and takes the lease of the idle ones. Shared by PUSH and the
// snapshot commit (watch-snapshots.ts), which runs it only when its compare-and-set succeeded.
// KEYS[base+1] = targets set, then per target i: outbox, drainer. ARGV from argBase: leaseMs, n,
// targets…, tokens…, entries….
export const PUSH_MANY_LUA = `
local function push_many(base, argBase)
  local leaseMs = ARGV[argBase]
  local n = tonumber(ARGV[argBase + 1])
  local firstEntry = argBase + 2 + 2 * n
  local kicked = {}
  for i = 1, n do
    local outbox = KEYS[base + 2 * i]
    local drainer = KEYS[base + 2 * i + 1]
    local target = ARGV[argBase + 1 + i]
    local token = ARGV[argBase + 1 + n + i]
    for e = firstEntry, #ARGV do redis.call('RPUSH', outbox, ARGV[e]) end
    redis.call('SADD', KEYS[base + 1], target)
    if redis.call('SET', drainer, token, 'NX', 'PX', leaseMs) then
      table.insert(kicked, target)
      table.insert(kicked, token)
    end
  end
  return kicked
end
`;

const PUSH = `${PUSH_MANY_LUA}
return push_many(0, 1)
`;

const POP = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return -1 end
if redis.call('LINDEX', KEYS[1], 0) ~= ARGV[2] then return 0 end
redis.call('LPOP', KEYS[1])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1
`;

const HOLD = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

const RELEASE = `
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return -1 end
if redis.call('LLEN', KEYS[1]) > 0 then return 0 end
redis.call('DEL', KEYS[2])
redis.call('SREM', KEYS[3], ARGV[2])
return 1
`;

const HAND = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`;

const KICK = `
if redis.call('LLEN', KEYS[1]) == 0 then
  if redis.call('EXISTS', KEYS[2]) == 0 then redis.call('SREM', KEYS[3], ARGV[3]) end
  return false
end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return ARGV[1] end
return false
`;

interface OutboxScripts {
  gpuopsOutboxPush(...args: (string | number)[]): Promise<string[]>;
  gpuopsOutboxPop(...args: (string | number)[]): Promise<number>;
  gpuopsOutboxHold(...args: (string | number)[]): Promise<number>;
  gpuopsOutboxRelease(...args: (string | number)[]): Promise<number>;
  gpuopsOutboxHand(...args: (string | number)[]): Promise<number>;
  gpuopsOutboxKick(...args: (string | number)[]): Promise<string | null>;
}

function withScripts(redis: Redis): Redis & OutboxScripts {
  const r = redis as Redis & Partial<OutboxScripts>;
  if (typeof r.gpuopsOutboxPush !== 'function') {
    redis.defineCommand('gpuopsOutboxPush', { lua: PUSH });
    redis.defineCommand('gpuopsOutboxPop', { numberOfKeys: 2, lua: POP });
    redis.defineCommand('gpuopsOutboxHold', { numberOfKeys: 1, lua: HOLD });
    redis.defineCommand('gpuopsOutboxRelease', { numberOfKeys: 3, lua: RELEASE });
    redis.defineCommand('gpuopsOutboxHand', { numberOfKeys: 1, lua: HAND });
    redis.defineCommand('gpuopsOutboxKick', { numberOfKeys: 3, lua: KICK });
  }
  return redis as Redis & OutboxScripts;
}

export interface OutboxKeys {
  readonly outbox: string;
  readonly drainer: string;
  readonly refs: string;
  readonly paced: string;
}

export function outboxKeys(prefix: string, target: string): OutboxKeys {
  return {
    outbox: watchKey(prefix, 'outbox', target),
    drainer: watchKey(prefix, 'drainer', target),
    refs: watchKey(prefix, 'refs', target),
    paced: watchKey(prefix, 'paced', target),
  };
}

export const outboxTargetsKey = (prefix: string) => watchKey(prefix, 'targets');

/**
 * The KEYS and ARGV tail of PUSH_MANY_LUA for these targets and entries (after whatever keys and
 * arguments the calling script has first), with the tokens offered to each target.
 */
export function pushManyArgs(
  prefix: string,
  targets: readonly string[],
  entries: readonly NewOutboxEntry[],
): { keys: string[]; args: string[]; tokens: string[] } {
  const tokens = targets.map(() => newDrainToken());
  const keys = [outboxTargetsKey(prefix)];
  for (const target of targets) {
    const k = outboxKeys(prefix, target);
    keys.push(k.outbox, k.drainer);
  }
  // Typed by the caller and checked where the drain reads it back (a look of up to three changes writes two a change; a larger one a summary and its thread pages).
  const ids = newEntryIds(entries.length);
  const raws = entries.map((e, i) => JSON.stringify({ ...e, id: ids[i] }));
  return {
    keys,
    args: [String(DRAIN_LEASE_MS), String(targets.length), ...targets, ...tokens, ...raws],
    tokens,
  };
}

/** Reads the flat [target, token, …] answer of PUSH_MANY_LUA. */
export function kickedPairs(flat: readonly string[] | null): Array<{ target: string; token: string }> {
  const out: Array<{ target: string; token: string }> = [];
  for (let i = 0; flat && i + 1 < flat.length; i += 2) out.push({ target: flat[i]!, token: flat[i + 1]! });
  return out;
}

export function createOutbox(store: Pick<Store, 'redis' | 'prefix'>): Outbox {
  const { redis, prefix } = store;
  const r = withScripts(redis);
  const keys = (target: string) => outboxKeys(prefix, target);
  const targetsKey = outboxTargetsKey(prefix);

  const pushMany: Outbox['pushMany'] = async (targets, entries) => {
    if (targets.length === 0 || entries.length === 0) return [];
    const { keys: k, args } = pushManyArgs(prefix, targets, entries);
    return kickedPairs(await r.gpuopsOutboxPush(k.length, ...k, ...args));
  };

  return {
    async push(target, entries) {
      const kicked = await pushMany([target], entries);
      return kicked[0]?.token;
    },
    pushMany,
    async head(target) {
      const raw = await redis.lindex(keys(target).outbox, 0);
      if (raw === null) return undefined;
      let entry: OutboxEntry | undefined;
      try {
        const parsed = outboxEntrySchema.safeParse(JSON.parse(raw));
        entry = parsed.success ? parsed.data : undefined;
      } catch {
        entry = undefined;
      }
      return { raw, entry };
    },
    async pop(target, token, raw) {
      const k = keys(target);
      return (await r.gpuopsOutboxPop(k.outbox, k.drainer, token, raw, DRAIN_LEASE_MS)) === 1;
    },
    async hold(target, token) {
      return (await r.gpuopsOutboxHold(keys(target).drainer, token, DRAIN_LEASE_MS)) === 1 ? 'held' : 'lost';
    },
    async release(target, token) {
      const k = keys(target);
      const result = await r.gpuopsOutboxRelease(k.outbox, k.drainer, targetsKey, token, target);
      return result === 1 ? 'released' : result === 0 ? 'more' : 'lost';
    },
    async hand(target, token, next, leaseMs) {
      return (await r.gpuopsOutboxHand(keys(target).drainer, token, next, leaseMs)) === 1;
    },
    async kick(target) {
      const k = keys(target);
      const token = newDrainToken();
      const answer = await r.gpuopsOutboxKick(k.outbox, k.drainer, targetsKey, token, DRAIN_LEASE_MS, target);
      return answer ?? undefined;
    },
    targets: () => redis.smembers(targetsKey),
    pending: (target) => redis.llen(keys(target).outbox),
    async ref(target, name) {
      return (await redis.hget(keys(target).refs, name)) ?? undefined;
    },
    async setRef(target, name, ts) {
      // Refs of a channel nobody posts to for months are let go: the next change posts afresh.
      await redis
        .multi()
        .hset(keys(target).refs, name, ts)
        .expire(keys(target).refs, REFS_TTL_SECONDS)
        .exec();
    },
    async forget(target, name) {
      await redis.hdel(keys(target).refs, name);
    },
    async notBefore(target) {
      return Number((await redis.get(keys(target).paced)) ?? 0);
    },
    async setNotBefore(target, at) {
      // Kept a little longer than it matters, so an idle target leaves nothing behind.
      const ttlMs = Math.max(1_000, at - Date.now() + 60_000);
      await redis.set(keys(target).paced, String(at), 'PX', ttlMs);
    },
    async putBlob(bytes) {
      const id = randomBytes(12).toString('base64url');
      await redis.set(watchKey(prefix, 'blob', id), bytes, 'EX', BLOB_TTL_SECONDS);
      return id;
    },
    async blob(id) {
      return (await redis.getBuffer(watchKey(prefix, 'blob', id))) ?? undefined;
    },
  };
}
