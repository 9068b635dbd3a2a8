import type { Redis } from 'ioredis';

/** At most `requests` per `perSeconds` window; 0 requests: no limit (the policy's `rate_limits`). */
export interface RateLimit {
  readonly requests: number;
  readonly perSeconds: number;
}

export interface RateLimits {
  readonly perUser: RateLimit;
  readonly perChannel: RateLimit;
}

// Requests per person and per channel, counted in Redis so every listener replica shares the count:
// one fixed window per key, both checked and counted in one Lua script (atomic, and both keys carry
// the hash tag {ratelimit}, so the script stays in one Redis Cluster slot). A refused request is not
// counted: a flood is slowed to the limit, never locked out beyond the window.
//
// Keys: <prefix>:{ratelimit}:user:<id> and <prefix>:{ratelimit}:channel:<id>, each a counter that
// expires with its window.

const TAKE = `
local limits = {tonumber(ARGV[1]), tonumber(ARGV[3])}
local windows = {tonumber(ARGV[2]), tonumber(ARGV[4])}
for i = 1, 2 do
  if limits[i] > 0 then
    local used = tonumber(redis.call('GET', KEYS[i]) or '0')
    if used >= limits[i] then
      local left = redis.call('PTTL', KEYS[i])
      if left < 0 then left = windows[i] end
      return {i, left}
    end
  end
end
for i = 1, 2 do
  if limits[i] > 0 and redis.call('INCR', KEYS[i]) == 1 then
    redis.call('PEXPIRE', KEYS[i], windows[i])
  end
end
return {0, 0}
`;

/** Taken, or refused because `who` reached its limit: retry after `retryAfterMs`. */
export type RateDecision =
  | { readonly ok: true }
  | {
      readonly ok: false;
      readonly who: 'user' | 'channel';
      readonly limit: RateLimit;
      readonly retryAfterMs: number;
    };

interface WithTake {
  gpuopsRateTake(
    userKey: string,
    channelKey: string,
    ...args: (string | number)[]
  ): Promise<[number, number]>;
}

export interface RateLimiter {
  /**
   * Counts one request of `userId` in `channelId`, unless either has reached its limit. Without a
   * channel (a workflow step) only the person's limit applies.
   */
  take(userId: string, channelId: string | undefined): Promise<RateDecision>;
}

export function createRateLimiter(redis: Redis, prefix: string, policy: RateLimits): RateLimiter {
  const r = redis as Redis & WithTake;
  if (typeof r.gpuopsRateTake !== 'function')
    r.defineCommand('gpuopsRateTake', { numberOfKeys: 2, lua: TAKE });
  const { perUser, perChannel } = policy;
  return {
    async take(userId, channelId) {
      if (perUser.requests === 0 && perChannel.requests === 0) return { ok: true };
      // No channel: its key is never read, as a limit of 0 is skipped.
      const [which, leftMs] = await r.gpuopsRateTake(
        `${prefix}:{ratelimit}:user:${userId}`,
        `${prefix}:{ratelimit}:channel:${channelId ?? '-'}`,
        perUser.requests,
        perUser.perSeconds * 1000,
        channelId === undefined ? 0 : perChannel.requests,
        perChannel.perSeconds * 1000,
      );
      if (which === 0) return { ok: true };
      const who = which === 1 ? 'user' : 'channel';
      return { ok: false, who, limit: who === 'user' ? perUser : perChannel, retryAfterMs: Number(leftMs) };
    },
  };
}

/** The answer to a refused request: what happened, why, and when to try again. */
export function rateLimitedAnswer(decision: Extract<RateDecision, { ok: false }>): string {
  const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  const window = formatWindow(decision.limit.perSeconds);
  const whose =
    decision.who === 'user'
      ? `You have sent ${decision.limit.requests} requests in ${window}, the most gpuops takes from one person`
      : `This channel has sent ${decision.limit.requests} requests in ${window}, the most gpuops takes from one channel`;
  return `${whose}, so nothing was started. Please try again in ${seconds} s (limits: \`rate_limits\` in the gpuops policy).`;
}

function formatWindow(seconds: number): string {
  if (seconds === 60) return 'a minute';
  if (seconds % 3600 === 0) return seconds === 3600 ? 'an hour' : `${seconds / 3600} hours`;
  if (seconds % 60 === 0) return `${seconds / 60} minutes`;
  return `${seconds} seconds`;
}
