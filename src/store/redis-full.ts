// Redis at its `maxmemory` with `noeviction` refuses writes with an OOM error: gpuops then refuses the
// request (nothing is queued, nothing already accepted is lost) and says so in words an operator acts on.

/** What the requester is told when Redis is full. */
export const REDIS_FULL =
  'Redis, where gpuops keeps its queue, is full, so nothing was queued. Please tell your gpuops operator (Redis has reached its maxmemory).';

/** Whether `err`, or any error it wraps, is Redis refusing a write for want of memory. */
export function isRedisFull(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (/^OOM\b/.test(e.message)) return true;
  }
  return false;
}
