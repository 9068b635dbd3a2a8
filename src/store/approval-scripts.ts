import type { Redis } from 'ioredis';

// The approval store's Lua scripts: each transition of a request is one atomic step, so concurrent
// clicks on any number of replicas see exactly one decision. Keys share the {approvals} hash tag.

const CREATE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('HGETALL', KEYS[1]) end
redis.call('HSET', KEYS[1], 'data', ARGV[1], 'state', 'pending', 'expiresAt', ARGV[2])
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[4])
-- What is still to be posted (the requester's message, the card), from the start, claimed by its maker
-- (ARGV[6]: since, ARGV[7]: for how long): see POST_CLAIM.
if ARGV[5] and ARGV[5] ~= '' then
  redis.call('HSET', KEYS[1], 'unposted', ARGV[5])
  if ARGV[6] and ARGV[6] ~= '' then redis.call('HSET', KEYS[1], 'postClaimedAt', ARGV[6], 'postLease', ARGV[7]) end
end
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
  -- An approval's intent to enqueue, with its deadline, in the same step: the sweeper finds it.
  if ARGV[1] == 'approved' and ARGV[6] and ARGV[6] ~= '' then
    redis.call('HSET', KEYS[1], 'stage', 'queuing', 'runBy', ARGV[6], 'claimedAt', ARGV[3])
    redis.call('ZADD', KEYS[3], ARGV[6], ARGV[4])
  end
end
local out = {status}
for _, v in ipairs(redis.call('HGETALL', KEYS[1])) do table.insert(out, v) end
return out
`;

// KEYS: request, queuing index. ARGV: now, lease (ms). Whoever claims an open enqueue intent acts on it
// for the lease; a second claimant (a click, another sweeper) leaves it. An approved request from
// before the lifecycle (no stage, no enqueuedAt) counts as queuing.
const CLAIM = `
if redis.call('HGET', KEYS[1], 'state') ~= 'approved' then return 0 end
local stage = redis.call('HGET', KEYS[1], 'stage')
if stage == false and redis.call('HEXISTS', KEYS[1], 'enqueuedAt') == 0 then stage = 'queuing' end
if stage ~= 'queuing' then return 0 end
local claimed = tonumber(redis.call('HGET', KEYS[1], 'claimedAt') or '0')
if claimed + tonumber(ARGV[2]) > tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'claimedAt', ARGV[1])
return 1
`;

// KEYS: request, queuing index. ARGV: the stage wanted (queued, running, lapsed), now, id. The moves
// of an approved request after its decision; returns the stage after the call. queuing → queued →
// running; queuing → lapsed (its deadline passed before its job reached the queue). A lapsed request
// never runs and a queued or running one never lapses: the worker and the sweeper race through here.
const STAGE = `
if redis.call('HGET', KEYS[1], 'state') ~= 'approved' then
  redis.call('ZREM', KEYS[2], ARGV[3])
  return 'not-approved'
end
local stage = redis.call('HGET', KEYS[1], 'stage')
if stage == false then
  if redis.call('HEXISTS', KEYS[1], 'enqueuedAt') == 1 then stage = 'queued' else stage = 'queuing' end
end
local to = ARGV[1]
if stage == 'lapsed' or stage == 'running' then return stage end
if to == 'lapsed' and stage ~= 'queuing' then return stage end
if to == 'queued' and stage == 'queued' then return stage end
redis.call('HSET', KEYS[1], 'stage', to)
if redis.call('HEXISTS', KEYS[1], 'enqueuedAt') == 0 and to ~= 'lapsed' then
  redis.call('HSET', KEYS[1], 'enqueuedAt', ARGV[2])
end
redis.call('ZREM', KEYS[2], ARGV[3])
return to
`;

// KEYS: request. ARGV: now, lease (ms), and for the request's maker the time it was made. Whoever claims
// a pending request's posts (its maker, a sweep) posts what is still unposted for the lease; anyone
// else leaves it, so a card is never posted twice. The maker holds the claim from the start (CREATE),
// so a sweep never takes the posting from under it; it takes the claim up only if it still holds that
// one, and a sweep may take it once the maker's short lease has run out (the maker is gone).
const POST_CLAIM = `
if redis.call('HGET', KEYS[1], 'state') ~= 'pending' then return 0 end
local claimed = tonumber(redis.call('HGET', KEYS[1], 'postClaimedAt') or '0')
if ARGV[3] and ARGV[3] ~= '' then
  if claimed ~= tonumber(ARGV[3]) then return 0 end
else
  local lease = tonumber(redis.call('HGET', KEYS[1], 'postLease') or ARGV[2])
  if claimed + lease > tonumber(ARGV[1]) then return 0 end
end
redis.call('HSET', KEYS[1], 'postClaimedAt', ARGV[1], 'postLease', ARGV[2])
return 1
`;

// KEYS: request. ARGV: what is still unposted ('' for nothing). Ends the claim of POST_CLAIM.
const POSTED = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[1] == '' then redis.call('HDEL', KEYS[1], 'unposted') else redis.call('HSET', KEYS[1], 'unposted', ARGV[1]) end
redis.call('HSET', KEYS[1], 'postClaimedAt', '0')
return 1
`;

const SET_IF_EXISTS = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
`;

// The same, only while the request is pending: what a decision reads is then all it will ever have.
const SET_IF_PENDING = `
if redis.call('HGET', KEYS[1], 'state') ~= 'pending' then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
`;

export interface ApprovalScripts {
  gpuopsApprovalCreate(reqKey: string, pendingKey: string, ...args: string[]): Promise<string[] | null>;
  gpuopsApprovalDecide(
    reqKey: string,
    pendingKey: string,
    queuingKey: string,
    ...args: string[]
  ): Promise<string[]>;
  gpuopsApprovalSet(reqKey: string, field: string, value: string): Promise<number>;
  gpuopsApprovalSetPending(reqKey: string, field: string, value: string): Promise<number>;
  gpuopsApprovalClaim(reqKey: string, queuingKey: string, now: string, leaseMs: string): Promise<number>;
  gpuopsApprovalStage(reqKey: string, queuingKey: string, ...args: string[]): Promise<string>;
  gpuopsApprovalPostClaim(reqKey: string, now: string, leaseMs: string, madeAt?: string): Promise<number>;
  gpuopsApprovalPosted(reqKey: string, unposted: string): Promise<number>;
}

export function withScripts(redis: Redis): Redis & ApprovalScripts {
  const r = redis as Redis & Partial<ApprovalScripts>;
  if (typeof r.gpuopsApprovalDecide !== 'function') {
    redis.defineCommand('gpuopsApprovalCreate', { numberOfKeys: 2, lua: CREATE });
    redis.defineCommand('gpuopsApprovalDecide', { numberOfKeys: 3, lua: DECIDE });
    redis.defineCommand('gpuopsApprovalClaim', { numberOfKeys: 2, lua: CLAIM });
    redis.defineCommand('gpuopsApprovalStage', { numberOfKeys: 2, lua: STAGE });
    redis.defineCommand('gpuopsApprovalSet', { numberOfKeys: 1, lua: SET_IF_EXISTS });
    redis.defineCommand('gpuopsApprovalSetPending', { numberOfKeys: 1, lua: SET_IF_PENDING });
    redis.defineCommand('gpuopsApprovalPostClaim', { numberOfKeys: 1, lua: POST_CLAIM });
    redis.defineCommand('gpuopsApprovalPosted', { numberOfKeys: 1, lua: POSTED });
  }
  return redis as Redis & ApprovalScripts;
}
