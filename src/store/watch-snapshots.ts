import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { Store } from './store.js';
import { watchKey } from './watch-keys.js';
import {
  createLedger,
  LEDGER_LUA,
  type Ledger,
  type LedgerChange,
  ledgerArgs,
  ledgerKeys,
} from './watch-ledger.js';
import { kickedPairs, type NewOutboxEntry, PUSH_MANY_LUA, pushManyArgs } from './watch-outbox.js';

export type { LedgerChange, LedgerDay, Opening } from './watch-ledger.js';

// What the state watcher saw last in each watched project, with a version. A poll commits its new
// snapshot and the messages its diff produced in ONE compare-and-set script: if another replica
// committed since this poll read the snapshot, nothing is written and nothing is posted, so each
// change is posted once however many replicas poll. Also the spend ledger the digest reads, and the
// back-off of projects whose cloud answered 429 or 5xx.
//
// Keys (under <prefix>:{watch}:): snap:<project> hash {version, stamp, polledAt, format} (earlier
// versions kept the whole snapshot in its `data` field); snapres:<project> hash, a field per resource;
// projects (set of watched projects); ledger:<project>:<day|month> hash (store/watch-ledger.ts);
// backoff:<project>.

export const WATCHED_KINDS = ['instance', 'k8s-cluster', 'k8s-pool', 'slurm-cluster', 'slurm-pool'] as const;
export type WatchedKind = (typeof WATCHED_KINDS)[number];

export const watchedResourceSchema = z.object({
  /** `<kind>:<id>`: stable across polls, names the resource's message. */
  key: z.string().min(1),
  kind: z.enum(WATCHED_KINDS),
  id: z.string().min(1),
  name: z.string(),
  /** What is compared between polls (state, ip, count, version…), as text. */
  fields: z.record(z.string(), z.string()),
  /** Nodes of a pool: name → what is compared (state and readiness). */
  nodes: z.record(z.string(), z.string()).optional(),
  /** The cluster a pool belongs to, for the message. */
  parent: z.string().optional(),
});
export type WatchedResource = z.infer<typeof watchedResourceSchema>;

export const projectSnapshotSchema = z.object({
  v: z.literal(1),
  polledAt: z.number(),
  resources: z.record(z.string(), watchedResourceSchema),
});
export type ProjectSnapshot = z.infer<typeof projectSnapshotSchema>;

// The resources of a snapshot as an array too, kept beside the record by whoever builds it (a look's
// listing, a read from Redis): walking a record of 10,000 keys with for-in or Object.keys sorts its
// keys on every walk, and a look walks its resources several times. A snapshot's record is not
// changed once built, except by the diff, which keeps the array in step.
const listsOf = new WeakMap<object, WatchedResource[]>();

/** Registers `list` (the record's resources, in any order) as the record's array. */
export function withList(
  resources: Record<string, WatchedResource>,
  list: WatchedResource[],
): Record<string, WatchedResource> {
  listsOf.set(resources, list);
  return resources;
}

/**
 * The resources of a record as an array, the very one registered if any: code that puts another
 * object under a key (the diff handing on an equal one) must put it in the array too.
 */
export function resourceList(resources: Readonly<Record<string, WatchedResource>>): WatchedResource[] {
  let list = listsOf.get(resources);
  if (!list) {
    list = Object.values(resources);
    listsOf.set(resources, list);
  }
  return list;
}

export interface StoredSnapshot {
  /** 0 when there is none yet: the next commit records the baseline. */
  readonly version: number;
  /** Undefined when missing or from an unreadable version (then the next poll is a new baseline). */
  readonly snapshot: ProjectSnapshot | undefined;
}

export interface CommitResult {
  readonly committed: boolean;
  /** Drains to start: targets whose outbox had no drain. */
  readonly kicked: ReadonlyArray<{ readonly target: string; readonly token: string }>;
}

export interface Backoff {
  readonly until: number;
  readonly failures: number;
  readonly reason: string;
}

/** What a look knows besides its snapshot. */
export interface CommitExtras {
  /** Spend to add to the ledger with the snapshot. */
  readonly ledger?: LedgerChange;
  /** The resources the poller's diff found new or changed, and those gone (changedKeys). */
  readonly changed?: { readonly set: readonly string[]; readonly gone: readonly string[] };
}

export interface SnapshotStore extends Ledger {
  read(projectId: string): Promise<StoredSnapshot>;
  /**
   * Writes `next` as version `expected + 1`, appends `entries` to every target's outbox, applies
   * `ledger` and ends the project's back-off, only if the stored version is still `expected` and the project is still watched.
   * With `extras.changed` (the poller's diff against the snapshot read at `expected`), only those
   * resources are written; without it, every one.
   */
  commit(
    projectId: string,
    expected: number,
    next: ProjectSnapshot,
    targets: readonly string[],
    entries: readonly NewOutboxEntry[],
    extras?: CommitExtras,
  ): Promise<CommitResult>;
  drop(projectId: string): Promise<void>;
  backoff(projectId: string): Promise<Backoff | undefined>;
  setBackoff(projectId: string, backoff: Backoff): Promise<void>;
}

// KEYS: meta, watched projects, resources, ledger day, month and previous day, back-off (cleared: the
// look went through), then PUSH_MANY_LUA's.
// ARGV, read in order: expected version, project, stamp, polledAt, 'all' or 'delta', the resources to
// set (count, then key and JSON pairs), to delete (count, keys), '1' and a ledger change (ledgerArgs)
// or '0', then PUSH_MANY_LUA's arguments.
const COMMIT = `${PUSH_MANY_LUA}${LEDGER_LUA}
if redis.call('SISMEMBER', KEYS[2], ARGV[2]) == 0 then return false end
local current = redis.call('HGET', KEYS[1], 'version') or '0'
if current ~= ARGV[1] then return false end
local c = 4
local function nxt() c = c + 1; return ARGV[c] end
if nxt() == 'all' then redis.call('DEL', KEYS[3]) end
for _ = 1, tonumber(nxt()) do
  local k = nxt()
  redis.call('HSET', KEYS[3], k, nxt())
end
for _ = 1, tonumber(nxt()) do redis.call('HDEL', KEYS[3], nxt()) end
redis.call('HSET', KEYS[1], 'version', tostring(tonumber(ARGV[1]) + 1), 'stamp', ARGV[3], 'polledAt', ARGV[4], 'format', '2')
redis.call('HDEL', KEYS[1], 'data')
if nxt() == '1' then apply_ledger(KEYS[4], KEYS[5], KEYS[6], nxt) end
redis.call('DEL', KEYS[7])
local out = {'ok'}
for _, v in ipairs(push_many(7, c + 1)) do table.insert(out, v) end
return out
`;

interface SnapshotScripts {
  gpuopsWatchCommit2(...args: (string | number | (string | number)[])[]): Promise<string[] | null>;
}

export const watchedProjectsKey = (prefix: string) => watchKey(prefix, 'projects');
export const snapshotKey = (prefix: string, projectId: string) => watchKey(prefix, 'snap', projectId);
/** One field per resource (its key), the resource as JSON. */
export const snapshotResourcesKey = (prefix: string, projectId: string) =>
  watchKey(prefix, 'snapres', projectId);

interface KnownSnapshot {
  readonly version: string;
  readonly stamp: string;
  readonly snapshot: ProjectSnapshot;
  /** Read from the one-field JSON of earlier versions: the next commit writes every resource. */
  readonly legacy?: boolean;
}

// The snapshot this replica last committed or read, by connection, prefix and project: a look whose
// stored version and stamp (random per commit) are still these reads two short fields instead of the
// whole snapshot and its parse and schema check (most of a look's cost in a large fleet:
// docs/performance.md), and its commit writes only the resources that changed. Callers only read the
// snapshots they are given.
const knownByConnection = new WeakMap<Redis, Map<string, Map<string, KnownSnapshot>>>();

function knownSnapshots(redis: Redis, prefix: string): Map<string, KnownSnapshot> {
  const byPrefix = knownByConnection.get(redis) ?? new Map<string, Map<string, KnownSnapshot>>();
  knownByConnection.set(redis, byPrefix);
  const known = byPrefix.get(prefix) ?? new Map<string, KnownSnapshot>();
  byPrefix.set(prefix, known);
  return known;
}

/** The resources stored one per field, each checked; undefined if any is unreadable. */
function parseResources(flat: Readonly<Record<string, string>>): ProjectSnapshot['resources'] | undefined {
  const resources: Record<string, WatchedResource> = {};
  const list: WatchedResource[] = [];
  for (const [key, raw] of Object.entries(flat)) {
    try {
      const parsed = watchedResourceSchema.safeParse(JSON.parse(raw));
      if (!parsed.success) return undefined;
      resources[key] = parsed.data;
      list.push(parsed.data);
    } catch {
      return undefined;
    }
  }
  return withList(resources, list);
}

function parseLegacy(data: string): ProjectSnapshot | undefined {
  try {
    const parsed = projectSnapshotSchema.safeParse(JSON.parse(data));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** What to write: the changes the poller's diff found, or every resource when the store cannot rely on them. */
function resourceWrites(
  previous: KnownSnapshot | undefined,
  next: ProjectSnapshot,
  changed: CommitExtras['changed'],
): (string | number)[] {
  const delta = previous && !previous.legacy && changed;
  const set = delta ? changed.set : resourceList(next.resources).map((r) => r.key);
  const gone = delta ? changed.gone : [];
  const out: (string | number)[] = [delta ? 'delta' : 'all', set.length];
  for (const key of set) out.push(key, JSON.stringify(next.resources[key]));
  out.push(gone.length);
  for (const key of gone) out.push(key);
  return out;
}

export function createSnapshotStore(store: Pick<Store, 'redis' | 'prefix'>): SnapshotStore {
  const { prefix } = store;
  const redis = store.redis as Redis & Partial<SnapshotScripts>;
  if (typeof redis.gpuopsWatchCommit2 !== 'function') {
    redis.defineCommand('gpuopsWatchCommit2', { lua: COMMIT });
  }
  const r = redis as Redis & SnapshotScripts;
  const known = knownSnapshots(redis, prefix);
  const backoffKey = (projectId: string) => watchKey(prefix, 'backoff', projectId);

  return {
    ...createLedger(redis, prefix),

    async read(projectId) {
      const key = snapshotKey(prefix, projectId);
      const [version, stamp, polledAt, format] = await redis.hmget(
        key,
        'version',
        'stamp',
        'polledAt',
        'format',
      );
      const mine = known.get(projectId);
      if (mine && stamp && mine.version === version && mine.stamp === stamp) {
        return { version: Number(version), snapshot: mine.snapshot };
      }
      let snapshot: ProjectSnapshot | undefined;
      let legacy = false;
      if (format === '2') {
        const resources = parseResources(await redis.hgetall(snapshotResourcesKey(prefix, projectId)));
        snapshot = resources ? { v: 1, polledAt: Number(polledAt), resources } : undefined;
      } else {
        // Written by an earlier version: the whole snapshot in one field.
        const data = await redis.hget(key, 'data');
        snapshot = data ? parseLegacy(data) : undefined;
        legacy = true;
      }
      if (snapshot && version && stamp) known.set(projectId, { version, stamp, snapshot, legacy });
      else known.delete(projectId);
      return { version: Number(version ?? 0), snapshot };
    },

    async commit(projectId, expected, next, targets, entries, extras = {}) {
      const { ledger, changed } = extras;
      // Typed by the caller and checked where it is read back: a schema pass here cost most of a large
      // fleet's commit (10,000 instances: about 40 ms).
      const mine = known.get(projectId);
      const writes = resourceWrites(mine?.version === String(expected) ? mine : undefined, next, changed);
      const stamp = randomBytes(9).toString('base64url');
      const push = pushManyArgs(prefix, entries.length > 0 ? targets : [], entries);
      const keys = [
        snapshotKey(prefix, projectId),
        watchedProjectsKey(prefix),
        snapshotResourcesKey(prefix, projectId),
        ...ledgerKeys(prefix, projectId, ledger),
        backoffKey(projectId),
        ...push.keys,
      ];
      // One array argument (ioredis flattens it): spreading 100,000 resources overflows the call stack.
      const args: (string | number)[] = [
        keys.length,
        ...keys,
        String(expected),
        projectId,
        stamp,
        next.polledAt,
      ];
      for (const w of writes) args.push(w);
      args.push(ledger ? '1' : '0');
      for (const a of ledger ? ledgerArgs(ledger) : []) args.push(a);
      for (const a of push.args) args.push(a);
      const answer = await r.gpuopsWatchCommit2(args);
      if (answer?.[0] !== 'ok') return { committed: false, kicked: [] };
      known.set(projectId, { version: String(expected + 1), stamp, snapshot: next });
      return { committed: true, kicked: kickedPairs(answer.slice(1)) };
    },

    async drop(projectId) {
      known.delete(projectId);
      await redis.del(
        snapshotKey(prefix, projectId),
        snapshotResourcesKey(prefix, projectId),
        backoffKey(projectId),
      );
    },

    async backoff(projectId) {
      const raw = await redis.get(backoffKey(projectId));
      if (!raw) return undefined;
      try {
        return JSON.parse(raw) as Backoff;
      } catch {
        return undefined;
      }
    },
    async setBackoff(projectId, backoff) {
      const ttlMs = Math.max(1_000, backoff.until - Date.now() + 3_600_000);
      await redis.set(backoffKey(projectId), JSON.stringify(backoff), 'PX', ttlMs);
    },
  };
}
