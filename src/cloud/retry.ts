import { CloudApiError, CloudNetworkError, CloudTimeoutError } from './cloud-errors.js';

// The one retry policy of the cloud clients (infrastructure, platform, metrics).
//
// Transient: network failures, timeouts, 408, 429 and every 5xx except 501 (501 means "never here").
// Safe to repeat: GET, HEAD, PUT, DELETE, and the instance start/stop actions, which the reference
// documents as actions on an existing instance (a repeat at worst answers 409).
// Creates (POST) are NEVER retried after the server may have seen them: a 503 can come from a proxy
// after the backend created the machine. The job layer makes creates idempotent by name instead
// (it lists before it creates). The one exception is a connection that was never established
// (refused, DNS failure): then nothing was sent and any request may be repeated.

export interface RetryPolicy {
  /** Total tries including the first. 1 disables retries. */
  readonly maxAttempts: number;
  /** Backoff before retry n is random in [0, min(maxDelayMs, baseDelayMs * 2^(n-1))] (full jitter). */
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** A server's Retry-After is honoured up to this long; longer asks are clipped to it. */
  readonly maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 250,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 30_000,
};

export interface RetryEvent {
  readonly operation: string;
  /** The attempt that failed, from 1. */
  readonly attempt: number;
  readonly delayMs: number;
  readonly error: unknown;
}

/** Knobs a client accepts: the policy plus hooks (observability; tests use `sleep` to skip waiting). */
export interface RetryOptions extends Partial<RetryPolicy> {
  readonly onRetry?: (event: RetryEvent) => void;
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly random?: () => number;
}

const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
/** POSTs that act on an existing resource and are safe to repeat. */
export const IDEMPOTENT_OPERATIONS: ReadonlySet<string> = new Set(['startInstance', 'stopInstance']);

/** Whether a request may be sent again after an answer that might mean it was processed. */
export function isRetrySafe(method: string, operation?: string): boolean {
  return (
    IDEMPOTENT_METHODS.has(method.toUpperCase()) ||
    (operation !== undefined && IDEMPOTENT_OPERATIONS.has(operation))
  );
}

const NEVER_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

/** A network failure that happened before the request left this process. */
export function wasNeverSent(err: unknown): boolean {
  return err instanceof CloudNetworkError && err.errCode !== undefined && NEVER_SENT.has(err.errCode);
}

/** Statuses worth another try. */
export function isTransientStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status !== 501);
}

export function isTransient(err: unknown): boolean {
  if (err instanceof CloudNetworkError || err instanceof CloudTimeoutError) return true;
  if (err instanceof CloudApiError) return isTransientStatus(err.status);
  return false;
}

/** Whether to try again after `err`, given whether the request is safe to repeat. */
export function shouldRetry(err: unknown, safe: boolean): boolean {
  return isTransient(err) && (safe || wasNeverSent(err));
}

/** Retry-After as milliseconds: delta-seconds or an HTTP date. Undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/** How long to wait before the next try after failed attempt `attempt` (from 1). */
export function retryDelay(
  attempt: number,
  policy: RetryPolicy,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, policy.maxRetryAfterMs);
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.floor(random() * ceiling);
}

export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export function resolvePolicy(options: RetryOptions | undefined): RetryPolicy {
  return {
    maxAttempts: Math.max(1, options?.maxAttempts ?? DEFAULT_RETRY_POLICY.maxAttempts),
    baseDelayMs: options?.baseDelayMs ?? DEFAULT_RETRY_POLICY.baseDelayMs,
    maxDelayMs: options?.maxDelayMs ?? DEFAULT_RETRY_POLICY.maxDelayMs,
    maxRetryAfterMs: options?.maxRetryAfterMs ?? DEFAULT_RETRY_POLICY.maxRetryAfterMs,
  };
}

/**
 * Runs `attempt` until it succeeds, fails permanently, or the policy's attempts run out; the last
 * error is rethrown unchanged. Waiting between tries stops at once when `signal` aborts.
 */
export async function withRetry<T>(
  operation: string,
  safe: boolean,
  attempt: (n: number) => Promise<T>,
  options?: RetryOptions & { readonly signal?: AbortSignal | undefined },
): Promise<T> {
  const policy = resolvePolicy(options);
  const sleep = options?.sleep ?? abortableSleep;
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      if (n >= policy.maxAttempts || !shouldRetry(err, safe) || options?.signal?.aborted) throw err;
      const retryAfter = err instanceof CloudApiError ? err.retryAfterMs : undefined;
      const delayMs = retryDelay(n, policy, retryAfter, options?.random);
      options?.onRetry?.({ operation, attempt: n, delayMs, error: err });
      await sleep(delayMs, options?.signal);
    }
  }
}
