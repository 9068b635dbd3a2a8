import type { Redis } from 'ioredis';
import { z } from 'zod';

// Leases: a stop time for a costly machine (policy approvals.lease). A lease is started when the
// create (or start) job that made the machine run is done; its reminder and its stop are delayed jobs
// that check, when they fire, that the lease still ends at the time they were made for — an Extend
// moves the stop time with one compare-and-set, so an old reminder or stop does nothing.
//
//   <prefix>:{leases}:<id>   hash: data (JSON), stopAt (ms), state, extensions

export const LEASE_STATES = ['active', 'stopping'] as const;
export type LeaseState = (typeof LEASE_STATES)[number];

const leaseDataSchema = z.object({
  v: z.literal(1),
  /** The id of the job that started the machine (an approval id when it was approved). */
  id: z.string().min(1),
  /** Slack user id of who asked for the machine: reminded, and may extend. */
  owner: z.string().min(1),
  /** The instance name (or id) the stop job resolves. */
  instance: z.string().min(1),
  teamId: z.string().min(1),
  /** Where the request was made: the stop job's message goes there. */
  channelId: z.string().min(1),
  projectId: z.string().optional(),
  /** The request as typed, for the reminder. */
  request: z.string(),
  /** The cost in words (`$23.12/h · $554.88/day`), when known. */
  cost: z.string().optional(),
  extendSeconds: z.number().int().positive(),
  remindBeforeSeconds: z.number().int().min(0),
  startedAt: z.number().int().positive(),
});

export interface Lease {
  readonly id: string;
  readonly owner: string;
  readonly instance: string;
  readonly teamId: string;
  readonly channelId: string;
  readonly projectId?: string;
  readonly request: string;
  readonly cost?: string;
  /** One Extend adds this much. */
  readonly extendSeconds: number;
  readonly remindBeforeSeconds: number;
  readonly startedAt: number;
  readonly stopAt: number;
  readonly state: LeaseState;
  readonly extensions: number;
}

export type NewLease = Omit<Lease, 'state' | 'extensions'>;

export type ExtendResult =
  | { readonly outcome: 'extended'; readonly lease: Lease }
  /** Someone extended it first (the button showed an older stop time): nothing changed. */
  | { readonly outcome: 'stale'; readonly lease: Lease }
  /** It already stops at the latest time allowed (`upTo`): nothing changed. */
  | { readonly outcome: 'at-limit'; readonly lease: Lease }
  /** Its machine is already being stopped. */
  | { readonly outcome: 'ended'; readonly lease: Lease }
  | { readonly outcome: 'not-found' };

export interface Leases {
  /** Records a lease; a lease with the same id already there is kept as it is (a retried job). */
  start(input: NewLease): Promise<{ readonly created: boolean; readonly lease: Lease }>;
  get(id: string): Promise<Lease | undefined>;
  /**
   * Moves the stop time from `fromStopAt` by the lease's extendSeconds, once however many click, and
   * never past `upTo` (epoch ms; the policy's lease.max_total from the start) when given.
   */
  extend(id: string, fromStopAt: number, options?: { readonly upTo?: number }): Promise<ExtendResult>;
  /** active and still ending at `stopAt` → stopping; false when extended or already stopping. */
  markStopping(id: string, stopAt: number): Promise<boolean>;
  /** The leases of machines `owner` asked for that have not ended, for their Home tab. */
  activeFor(owner: string): Promise<Lease[]>;
}

const START = `
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('HGETALL', KEYS[1]) end
redis.call('HSET', KEYS[1], 'data', ARGV[1], 'stopAt', ARGV[2], 'state', 'active', 'extensions', '0')
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
return false
`;

const EXTEND = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {'not-found'} end
local status = 'extended'
if redis.call('HGET', KEYS[1], 'state') ~= 'active' then
  status = 'ended'
elseif redis.call('HGET', KEYS[1], 'stopAt') ~= ARGV[1] then
  status = 'stale'
elseif ARGV[4] ~= '' and tonumber(ARGV[1]) >= tonumber(ARGV[4]) then
  status = 'at-limit'
else
  local stopAt = tonumber(ARGV[1]) + tonumber(ARGV[2])
  if ARGV[4] ~= '' and stopAt > tonumber(ARGV[4]) then stopAt = tonumber(ARGV[4]) end
  redis.call('HSET', KEYS[1], 'stopAt', tostring(stopAt))
  redis.call('HINCRBY', KEYS[1], 'extensions', 1)
  redis.call('PEXPIREAT', KEYS[1], stopAt + tonumber(ARGV[3]))
end
local out = {status}
for _, v in ipairs(redis.call('HGETALL', KEYS[1])) do table.insert(out, v) end
return out
`;

const MARK_STOPPING = `
if redis.call('HGET', KEYS[1], 'state') ~= 'active' then return 0 end
if redis.call('HGET', KEYS[1], 'stopAt') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', 'stopping')
return 1
`;

interface LeaseScripts {
  gpuopsLeaseStart(key: string, ...args: string[]): Promise<string[] | null>;
  gpuopsLeaseExtend(key: string, ...args: string[]): Promise<string[]>;
  gpuopsLeaseStopping(key: string, stopAt: string): Promise<number>;
}

function withScripts(redis: Redis): Redis & LeaseScripts {
  const r = redis as Redis & Partial<LeaseScripts>;
  if (typeof r.gpuopsLeaseExtend !== 'function') {
    redis.defineCommand('gpuopsLeaseStart', { numberOfKeys: 1, lua: START });
    redis.defineCommand('gpuopsLeaseExtend', { numberOfKeys: 1, lua: EXTEND });
    redis.defineCommand('gpuopsLeaseStopping', { numberOfKeys: 1, lua: MARK_STOPPING });
  }
  return redis as Redis & LeaseScripts;
}

function fromFields(h: Record<string, string>): Lease | undefined {
  if (!h.data) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(h.data);
  } catch {
    return undefined;
  }
  const data = leaseDataSchema.safeParse(raw);
  if (!data.success) return undefined;
  const { v: _v, projectId, cost, ...rest } = data.data;
  return {
    ...rest,
    ...(projectId !== undefined ? { projectId } : {}),
    ...(cost !== undefined ? { cost } : {}),
    stopAt: Number(h.stopAt),
    state: z.enum(LEASE_STATES).catch('active').parse(h.state),
    extensions: Number(h.extensions ?? 0),
  };
}

function fromFlat(flat: readonly string[]): Lease | undefined {
  const h: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) h[flat[i]!] = flat[i + 1]!;
  return fromFields(h);
}

export function createLeases(
  redis: Redis,
  options: { readonly prefix?: string; readonly keepForSeconds?: number } = {},
): Leases {
  const prefix = options.prefix ?? 'gpuops';
  const keepMs = (options.keepForSeconds ?? 7 * 86_400) * 1000;
  const r = withScripts(redis);
  const key = (id: string) => `${prefix}:{leases}:${id}`;
  const ownerKey = (owner: string) => `${prefix}:{leases}:owner:${owner}`;
  const get = async (id: string) => fromFields(await redis.hgetall(key(id)));

  return {
    async start(input) {
      const { stopAt, ...rest } = input;
      const data = leaseDataSchema.parse({ v: 1, ...rest });
      const existing = await r.gpuopsLeaseStart(
        key(input.id),
        JSON.stringify(data),
        String(stopAt),
        String(stopAt + keepMs),
      );
      if (existing) {
        const lease = fromFlat(existing);
        if (lease) return { created: false, lease };
      }
      await redis.sadd(ownerKey(input.owner), input.id);
      // Each new lease pushes the index's expiry out; leases gone by then are dropped on read.
      await redis.pexpire(ownerKey(input.owner), Math.max(stopAt - Date.now(), 0) + keepMs + 30 * 86_400_000);
      return { created: true, lease: { ...input, state: 'active', extensions: 0 } };
    },

    get,

    async extend(id, fromStopAt, opts = {}) {
      const current = await get(id);
      if (!current) return { outcome: 'not-found' };
      const [status, ...flat] = await r.gpuopsLeaseExtend(
        key(id),
        String(fromStopAt),
        String(current.extendSeconds * 1000),
        String(keepMs),
        opts.upTo !== undefined ? String(Math.floor(opts.upTo)) : '',
      );
      const lease = fromFlat(flat);
      if (status === 'not-found' || !lease) return { outcome: 'not-found' };
      if (status === 'extended' || status === 'stale' || status === 'ended' || status === 'at-limit')
        return { outcome: status, lease };
      throw new Error(`unexpected answer from the lease script: ${status}`);
    },

    async activeFor(owner) {
      const ids = await redis.smembers(ownerKey(owner));
      const leases = await Promise.all(ids.map((id) => get(id)));
      const gone = ids.filter((_, i) => leases[i] === undefined);
      if (gone.length > 0) await redis.srem(ownerKey(owner), ...gone);
      return leases.filter((l): l is Lease => l !== undefined && l.state === 'active');
    },

    async markStopping(id, stopAt) {
      return (await r.gpuopsLeaseStopping(key(id), String(stopAt))) === 1;
    },
  };
}
