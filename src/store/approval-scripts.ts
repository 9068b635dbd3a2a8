import type { Redis } from 'ioredis';

// The approval store's Lua scripts: each transition of a request is one atomic step, so concurrent
// clicks on any number of replicas see exactly one decision. Keys share the {approvals} hash tag.

const CREATE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('HGETALL', KEYS[1]) end
redis.call('HSET', KEYS[1], 'data', ARGV[1], 'state', 'pending', 'expiresAt', ARGV[2])
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[4])
return false
`;

// Returns {status, HGETALL...}: the state after the call, read in the same atomic step.
const DECIDE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {'not-found'} end
local status = 'decided'
local state = redis.call('HGET', KEYS[1], 'state')
local expiresAt = tonumber(redis.call('HGET', KEYS[1], 'expiresAt'))
local at = tonumber(ARGV[3])
if state ~= 'pending' then
  status = 'already-decided'
elseif ARGV[1] == 'expired' and at < expiresAt then
  status = 'not-due'
elseif ARGV[1] ~= 'expired' and at >= expiresAt then
  status = 'expired'
else
  redis.call('HSET', KEYS[1], 'state', ARGV[1], 'decision', ARGV[2])
  -- The decision's audit entry, kept with it until it is on the audit trail (another Cluster slot).
  if ARGV[5] and ARGV[5] ~= '' then redis.call('HSET', KEYS[1], 'audit', ARGV[5]) end
  redis.call('ZREM', KEYS[2], ARGV[4])
end
local out = {status}
for _, v in ipairs(redis.call('HGETALL', KEYS[1])) do table.insert(out, v) end
return out
`;

const SET_IF_EXISTS = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
`;

export interface ApprovalScripts {
  gpuopsApprovalCreate(reqKey: string, pendingKey: string, ...args: string[]): Promise<string[] | null>;
  gpuopsApprovalDecide(reqKey: string, pendingKey: string, ...args: string[]): Promise<string[]>;
  gpuopsApprovalSet(reqKey: string, field: string, value: string): Promise<number>;
}

export function withScripts(redis: Redis): Redis & ApprovalScripts {
  const r = redis as Redis & Partial<ApprovalScripts>;
  if (typeof r.gpuopsApprovalDecide !== 'function') {
    redis.defineCommand('gpuopsApprovalCreate', { numberOfKeys: 2, lua: CREATE });
    redis.defineCommand('gpuopsApprovalDecide', { numberOfKeys: 2, lua: DECIDE });
    redis.defineCommand('gpuopsApprovalSet', { numberOfKeys: 1, lua: SET_IF_EXISTS });
  }
  return redis as Redis & ApprovalScripts;
}
