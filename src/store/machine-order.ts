import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

// Requests on one machine take effect in the order they were accepted (docs/reliability.md, "Requests
// on one machine run in the order accepted"). Each machine a change acts on has a sorted set of the
// jobs accepted for it, scored by when Redis accepted them (its own clock, so listeners on several
// hosts agree): written in the step that accepts the request (Store.acceptJob), or, for a job that
// reached the queue another way (a lease's stop), when it first begins. A job leaves the set when it
// has answered; one that never does (its process died after answering, BullMQ gave up on it) is
// found finished by the next job that looks at it and taken out then.

/** How long a machine's set lives after its last accepted job: far past any job's retries. */
export const ORDER_SECONDS = 24 * 3600;

/**
 * Lua: adds ARGV[1] to the sorted set KEYS[1] (unless it is there), scored by Redis's clock in
 * microseconds, and keeps the set for ARGV[2] seconds. The score is built as a string: Lua would print
 * the number with 14 digits and lose the microseconds.
 */
export const ORDER_ADD_LUA = `
local function orderAdd(key, member, seconds)
  local t = redis.call('TIME')
  redis.call('ZADD', key, 'NX', t[1] .. string.format('%06d', tonumber(t[2])), member)
  redis.call('EXPIRE', key, seconds)
  return t
end
`;

// KEYS: the machine's set. ARGV: job id, set seconds. Returns Redis's clock (µs) and then, in the order
// accepted, each job accepted before this one with its score (µs).
const EARLIER = `${ORDER_ADD_LUA}
local t = orderAdd(KEYS[1], ARGV[1], ARGV[2])
local rank = redis.call('ZRANK', KEYS[1], ARGV[1])
local out = { t[1] .. string.format('%06d', tonumber(t[2])) }
if rank > 0 then
  local earlier = redis.call('ZRANGE', KEYS[1], 0, rank - 1, 'WITHSCORES')
  for i = 1, #earlier do out[#out + 1] = earlier[i] end
end
return out
`;

interface OrderScript {
  gpuopsOrderEarlier(key: string, jobId: string, seconds: string): Promise<string[]>;
}

/** A job accepted on the same machine before the one asking, and when (ms since the epoch, Redis's clock). */
export interface EarlierJob {
  readonly id: string;
  readonly acceptedAt: number;
}

export interface MachineOrder {
  /**
   * Places the job in its machine's order (where acceptJob did not) and returns Redis's clock (ms) and
   * the jobs accepted before it that have not left, first accepted first.
   */
  earlierOnMachine(machine: string, jobId: string): Promise<{ now: number; earlier: EarlierJob[] }>;
  /** Takes the job out of its machine's order: it has answered, or was found finished. */
  leaveMachineOrder(machine: string, jobId: string): Promise<void>;
}

/**
 * The name of a machine's order: its name (as the request names it) within its project (none: the
 * default project), hashed so the key stays short whatever the name.
 */
export function machineOrderId(projectId: string | undefined, name: string): string {
  return createHash('sha256')
    .update(`${projectId ?? ''}\u0000${name}`)
    .digest('base64url')
    .slice(0, 24);
}

/** The Redis key of a machine's order: under the store's prefix, so in its slot on a Cluster. */
export const machineOrderKey = (prefix: string, machine: string) => `${prefix}:order:${machine}`;

export function createMachineOrder(redis: Redis, prefix: string): MachineOrder {
  const scripted = redis as Redis & Partial<OrderScript>;
  if (typeof scripted.gpuopsOrderEarlier !== 'function')
    redis.defineCommand('gpuopsOrderEarlier', { numberOfKeys: 1, lua: EARLIER });
  const scripts = redis as Redis & OrderScript;
  const ms = (micros: string) => Math.floor(Number(micros) / 1_000);
  return {
    async earlierOnMachine(machine, jobId) {
      const [now, ...rest] = await scripts.gpuopsOrderEarlier(
        machineOrderKey(prefix, machine),
        jobId,
        String(ORDER_SECONDS),
      );
      const earlier: EarlierJob[] = [];
      for (let i = 0; i + 1 < rest.length; i += 2)
        earlier.push({ id: rest[i]!, acceptedAt: ms(rest[i + 1]!) });
      return { now: ms(now!), earlier };
    },
    async leaveMachineOrder(machine, jobId) {
      await redis.zrem(machineOrderKey(prefix, machine), jobId);
    },
  };
}
