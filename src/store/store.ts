import type { Redis } from 'ioredis';
import type { MessageRef } from '../jobs/message-ref.js';
import type { BindingCache } from './binding-cache.js';
import { changed, type JobChange, type JobRecord } from './job-record.js';
import {
  createMachineOrder,
  type MachineOrder,
  machineOrderKey,
  ORDER_ADD_LUA,
  ORDER_SECONDS,
} from './machine-order.js';

// Redis-backed state other than the queue. Every key starts with the store's prefix so several
// deployments (or test files) can share one Redis without seeing each other's state.

export interface ProjectBinding {
  readonly projectId: string;
  readonly name?: string;
  readonly boundBy: string;
  readonly boundAt: number;
}

export {
  changed,
  JOB_STATES,
  type JobChange,
  type JobRecord,
  type JobState,
  type RecordedAnswer,
} from './job-record.js';

export interface SshKeyOwnership {
  readonly name: string;
  readonly userId: string;
  readonly publicKey: string;
  readonly addedAt: number;
}

const JOB_LOG_LENGTH = 200;
const JOB_RECORD_SECONDS = 14 * 24 * 3600;

export interface AcceptJobInput {
  readonly record: JobRecord;
  /** Slack's trigger id of the request, held for `seconds` (the signature window). */
  readonly trigger?: { readonly id: string; readonly seconds: number };
  /**
   * The request's fingerprint, held for `seconds` with the job's id (the dedupe window). A repeat finds
   * the holder only while its job has not finished and no other request named the same target since.
   */
  readonly claim?: { readonly fingerprint: string; readonly seconds: number };
  /**
   * What the request changes (`<project>:instance:train-1`): it becomes the target's latest request for
   * `seconds`, so a repeat of an earlier request on it runs again rather than finding that one.
   */
  readonly target?: { readonly id: string; readonly seconds: number };
  /** The machine it changes (a machine-order id): the job joins that machine's order (machine-order.ts). */
  readonly machine?: string;
  /**
   * The request's audit entry, stored in the same step once the job is recorded (Audit.prepare): one
   * round trip fewer, and a repeat or replay, which records nothing, adds no entry either.
   */
  readonly audit?: {
    readonly key: string;
    readonly minId: string;
    readonly idMs: number;
    readonly json: string;
  };
}

/**
 * `replay`: the trigger was seen (holder: the job its first delivery made, or the value an older
 * version stored); `duplicate`: the job already holding the fingerprint; else recorded.
 */
export type AcceptJobAnswer =
  | { readonly status: 'recorded'; readonly auditId?: string }
  | { readonly status: 'replay' | 'duplicate'; readonly holder: string };

// Whether the request holding a dedupe claim is still pending: its job record is not final (done,
// failed); with no record yet, its approval (a request waiting for approvers shares the claim under
// its approval's id) is not denied or expired; and, with a target, no other request named that target
// since. Record and approval keys are built from prefixes: they share the store's hash tag, so they
// sit in the script's slot on a Cluster.
const HOLDER_PENDING = `
local function holderPending(holder, targetKey, useTarget, jobPrefix, approvalPrefix)
  local held = redis.call('GET', jobPrefix .. holder)
  if held then
    local state = cjson.decode(held).state
    if state == 'done' or state == 'failed' then return false end
  else
    local decided = redis.call('HGET', approvalPrefix .. holder, 'state')
    if decided == 'denied' or decided == 'expired' then return false end
  end
  if useTarget then
    local latest = redis.call('GET', targetKey)
    if latest and latest ~= holder then return false end
  end
  return true
end
`;

// KEYS: trigger, dedupe, job, the channel's job list, the audit stream, the target's latest request,
// the order of the machine it changes (all in the store's slot on a Cluster). ARGV: job id, trigger
// seconds, dedupe seconds (0: that claim is not made), record, record seconds, list length, then the
// audit entry (empty: none), its MINID and its id's milliseconds, then target seconds (0: no target),
// the prefix of job record keys and that of approval keys, then the machine order's seconds (0: it
// changes no machine; machine-order.ts). Each claim holds the job's id, so a repeat can name the job
// it repeats; a dedupe claim only counts while its holder is pending (HOLDER_PENDING). An entry id at or below the
// stream's last (another replica's clock ahead) is left to Redis, as Audit.append does.
const ACCEPT_JOB = `${HOLDER_PENDING}${ORDER_ADD_LUA}
if ARGV[2] ~= '0' and not redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2], 'NX') then
  return {'replay', redis.call('GET', KEYS[1])}
end
if ARGV[3] ~= '0' then
  local holder = redis.call('GET', KEYS[2])
  if holder and holderPending(holder, KEYS[6], ARGV[10] ~= '0', ARGV[11], ARGV[12]) then
    return {'duplicate', holder}
  end
  redis.call('SET', KEYS[2], ARGV[1], 'EX', ARGV[3])
end
if ARGV[10] ~= '0' then redis.call('SET', KEYS[6], ARGV[1], 'EX', ARGV[10]) end
redis.call('SET', KEYS[3], ARGV[4], 'EX', ARGV[5])
redis.call('LPUSH', KEYS[4], ARGV[1])
redis.call('LTRIM', KEYS[4], 0, tonumber(ARGV[6]) - 1)
if ARGV[13] ~= '0' then orderAdd(KEYS[7], ARGV[1], ARGV[13]) end
if ARGV[7] == '' then return {'recorded'} end
local id = redis.pcall('XADD', KEYS[5], 'MINID', '~', ARGV[8], ARGV[9] .. '-*', 'entry', ARGV[7])
if type(id) == 'table' and id.err then
  id = redis.call('XADD', KEYS[5], 'MINID', '~', ARGV[8], '*', 'entry', ARGV[7])
end
return {'recorded', id}
`;

// The dedupe claim, for a request that goes to approvers. KEYS: dedupe, the target's latest request.
// ARGV: holder id, seconds, the prefix of job record keys and that of approval keys, target seconds (0:
// no target). Returns the pending holder, if any; else claims and marks the target as asked by it.
const CLAIM_REQUEST = `${HOLDER_PENDING}
local holder = redis.call('GET', KEYS[1])
if holder and holderPending(holder, KEYS[2], ARGV[5] ~= '0', ARGV[3], ARGV[4]) then return holder end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
if ARGV[5] ~= '0' then redis.call('SET', KEYS[2], ARGV[1], 'EX', ARGV[5]) end
return false
`;

interface AcceptJobScript {
  gpuopsAcceptJob(...keysAndArgs: string[]): Promise<[string, string?]>;
  gpuopsClaimRequest(...keysAndArgs: string[]): Promise<string | null>;
}

export interface Store extends MachineOrder {
  readonly redis: Redis;
  readonly prefix: string;

  bindProject(channelId: string, binding: ProjectBinding): Promise<void>;
  projectOf(channelId: string): Promise<ProjectBinding | undefined>;

  /**
   * Claims a request fingerprint for `seconds`; returns the job or approval id holding it, if that one
   * is still pending and, with a `target`, nothing else was asked of it since (the rules of acceptJob);
   * else marks the target as asked by this request.
   */
  claimRequest(
    fingerprint: string,
    jobId: string,
    seconds: number,
    target?: { readonly id: string; readonly seconds: number },
  ): Promise<string | undefined>;
  /** Claims a Slack trigger id for `seconds`; returns what already holds it, if it was seen. */
  claimTrigger(triggerId: string, holder: string, seconds: number): Promise<string | undefined>;

  /**
   * A new request in one atomic step: claims its Slack trigger (a replay of the same delivery),
   * then its fingerprint (a repeat within `seconds` of a job still pending, with nothing else asked of
   * its target since), marks its target, then records the job. Nothing is written past a claim that
   * fails.
   */
  acceptJob(input: AcceptJobInput): Promise<AcceptJobAnswer>;

  recordJob(record: JobRecord): Promise<void>;
  updateJob(id: string, change: JobChange): Promise<void>;
  /**
   * updateJob for the one writer of a running job, which holds its record: one write instead of a read
   * and a write. Returns the new record; nothing is written (undefined) if the record expired.
   */
  updateHeldJob(record: JobRecord, change: JobChange): Promise<JobRecord | undefined>;
  job(id: string): Promise<JobRecord | undefined>;
  /** The record and the message reference of a job, in one read. */
  jobAndMessage(id: string): Promise<{ record?: JobRecord; message?: MessageRef }>;
  recentJobs(channelId: string, limit: number): Promise<JobRecord[]>;

  /** The message a job edits in place. */
  setJobMessage(jobId: string, ref: MessageRef): Promise<void>;
  jobMessage(jobId: string): Promise<MessageRef | undefined>;

  addKeyOwner(key: SshKeyOwnership): Promise<void>;
  removeKeyOwner(name: string): Promise<void>;
  keyOwner(name: string): Promise<SshKeyOwnership | undefined>;
  keysOf(userId: string): Promise<SshKeyOwnership[]>;

  /** Cached catalogue data (configurations, capacity, instance types) for modals that must open at once. */
  putCache(name: string, value: unknown, ttlSeconds: number): Promise<void>;
  cached<T>(name: string): Promise<{ value: T; storedAt: number } | undefined>;
  /** Several cached entries in one read, in the order named. */
  cachedMany(names: readonly string[]): Promise<({ value: unknown; storedAt: number } | undefined)[]>;
}

/**
 * The store's prefix on a Redis Cluster: a hash tag, so every key of the store (and every script or
 * transaction over several of them) sits in one slot, with the queue's (`{gpuops}`). One server or
 * Sentinel keeps `gpuops`, so existing deployments keep their keys.
 */
export const CLUSTER_STORE_PREFIX = '{gpuops}';

/** The Redis key of a cached entry (Store.putCache, Store.cached). */
export const cacheKey = (prefix: string, name: string) => `${prefix}:cache:${name}`;

export interface StoreOptions {
  /**
   * The channels' bindings kept in the process (src/store/binding-cache.ts, made on `redis`); without
   * it every binding is read from Redis.
   */
  readonly bindings?: BindingCache;
}

export function createStore(redis: Redis, prefix = 'gpuops', options: StoreOptions = {}): Store {
  const { bindings } = options;
  const k = (...parts: string[]) => [prefix, ...parts].join(':');
  const scripted = redis as Redis & Partial<AcceptJobScript>;
  if (typeof scripted.gpuopsAcceptJob !== 'function') {
    redis.defineCommand('gpuopsAcceptJob', { numberOfKeys: 7, lua: ACCEPT_JOB });
    redis.defineCommand('gpuopsClaimRequest', { numberOfKeys: 2, lua: CLAIM_REQUEST });
  }
  const scripts = redis as Redis & AcceptJobScript;
  // Where a claim's holder is recorded: its job record, or its approval (src/store/approvals.ts).
  const jobPrefix = `${k('job')}:`;
  const approvalPrefix = `${prefix}:{approvals}:req:`;
  const parse = <T>(raw: string | null): T | undefined => (raw === null ? undefined : (JSON.parse(raw) as T));
  const claim = async (key: string, value: string, seconds: number): Promise<string | undefined> => {
    const set = await redis.set(key, value, 'EX', seconds, 'NX');
    if (set === 'OK') return undefined;
    return (await redis.get(key)) ?? undefined;
  };

  const acceptJob = async ({
    record,
    trigger,
    claim: dedupe,
    target,
    machine,
    audit,
  }: AcceptJobInput): Promise<AcceptJobAnswer> => {
    const [status, second] = await scripts.gpuopsAcceptJob(
      k('trigger', trigger?.id ?? ''),
      k('dedupe', dedupe?.fingerprint ?? ''),
      k('job', record.id),
      k('channel', record.channelId, 'jobs'),
      audit?.key ?? k('audit'),
      k('target', target?.id ?? ''),
      machineOrderKey(prefix, machine ?? ''),
      record.id,
      String(trigger?.seconds ?? 0),
      String(dedupe?.seconds ?? 0),
      JSON.stringify(record),
      String(JOB_RECORD_SECONDS),
      String(JOB_LOG_LENGTH),
      audit?.json ?? '',
      audit?.minId ?? '0',
      String(audit?.idMs ?? 0),
      String(target?.seconds ?? 0),
      jobPrefix,
      approvalPrefix,
      String(machine ? ORDER_SECONDS : 0),
    );
    if (status === 'replay' || status === 'duplicate') return { status, holder: second ?? '' };
    return { status: 'recorded', ...(second ? { auditId: second } : {}) };
  };

  return {
    redis,
    prefix,
    ...createMachineOrder(redis, prefix),

    async bindProject(channelId, binding) {
      const key = k('channel', channelId, 'project');
      await redis.set(key, JSON.stringify(binding));
      bindings?.forget(key);
    },
    async projectOf(channelId) {
      const key = k('channel', channelId, 'project');
      return parse<ProjectBinding>(await (bindings ? bindings.get(key) : redis.get(key)));
    },

    claimRequest: async (fingerprint, jobId, seconds, target) =>
      (await scripts.gpuopsClaimRequest(
        k('dedupe', fingerprint),
        k('target', target?.id ?? ''),
        jobId,
        String(seconds),
        jobPrefix,
        approvalPrefix,
        String(target?.seconds ?? 0),
      )) ?? undefined,
    claimTrigger: (triggerId, holder, seconds) => claim(k('trigger', triggerId), holder, seconds),

    acceptJob,
    async recordJob(record) {
      await acceptJob({ record });
    },
    async updateJob(id, change) {
      const current = parse<JobRecord>(await redis.get(k('job', id)));
      if (!current) return;
      await redis.set(k('job', id), JSON.stringify(changed(current, change)), 'KEEPTTL');
    },
    async updateHeldJob(record, change) {
      const next = changed(record, change);
      const written = await redis.set(k('job', record.id), JSON.stringify(next), 'KEEPTTL', 'XX');
      return written === 'OK' ? next : undefined;
    },
    async job(id) {
      return parse<JobRecord>(await redis.get(k('job', id)));
    },
    async jobAndMessage(id) {
      const [record, message] = await redis.mget(k('job', id), k('job', id, 'message'));
      const found = { record: parse<JobRecord>(record ?? null), message: parse<MessageRef>(message ?? null) };
      return {
        ...(found.record ? { record: found.record } : {}),
        ...(found.message ? { message: found.message } : {}),
      };
    },
    async recentJobs(channelId, limit) {
      const ids = await redis.lrange(k('channel', channelId, 'jobs'), 0, Math.max(0, limit - 1));
      if (ids.length === 0) return [];
      const raws = await redis.mget(ids.map((id) => k('job', id)));
      return raws.flatMap((raw) => {
        const record = parse<JobRecord>(raw);
        return record ? [record] : [];
      });
    },

    async setJobMessage(jobId, ref) {
      await redis.set(k('job', jobId, 'message'), JSON.stringify(ref), 'EX', JOB_RECORD_SECONDS);
    },
    async jobMessage(jobId) {
      return parse<MessageRef>(await redis.get(k('job', jobId, 'message')));
    },

    async addKeyOwner(key) {
      const previous = parse<SshKeyOwnership>(await redis.get(k('sshkey', key.name)));
      const tx = redis.multi().set(k('sshkey', key.name), JSON.stringify(key));
      if (previous && previous.userId !== key.userId)
        tx.srem(k('user', previous.userId, 'sshkeys'), key.name);
      await tx.sadd(k('user', key.userId, 'sshkeys'), key.name).exec();
    },
    async removeKeyOwner(name) {
      const previous = parse<SshKeyOwnership>(await redis.get(k('sshkey', name)));
      const tx = redis.multi().del(k('sshkey', name));
      if (previous) tx.srem(k('user', previous.userId, 'sshkeys'), name);
      await tx.exec();
    },
    async keyOwner(name) {
      return parse<SshKeyOwnership>(await redis.get(k('sshkey', name)));
    },
    async keysOf(userId) {
      const names = (await redis.smembers(k('user', userId, 'sshkeys'))).sort();
      if (names.length === 0) return [];
      const raws = await redis.mget(names.map((n) => k('sshkey', n)));
      return raws.flatMap((raw) => {
        const key = parse<SshKeyOwnership>(raw);
        return key && key.userId === userId ? [key] : [];
      });
    },

    async putCache(name, value, ttlSeconds) {
      await redis.set(
        cacheKey(prefix, name),
        JSON.stringify({ value, storedAt: Date.now() }),
        'EX',
        ttlSeconds,
      );
    },
    async cached<T>(name: string) {
      return parse<{ value: T; storedAt: number }>(await redis.get(cacheKey(prefix, name)));
    },
    async cachedMany(names) {
      if (names.length === 0) return [];
      const raws = await redis.mget(names.map((name) => cacheKey(prefix, name)));
      return raws.map((raw) => parse<{ value: unknown; storedAt: number }>(raw));
    },
  };
}
