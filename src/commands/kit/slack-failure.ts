// How the outbox drain treats a failed Slack call: wait out a rate limit (Retry-After), fall back when
// the message to edit or reply under is gone, drop what can never be sent (with a log line), and
// retry the rest. Pure: it reads the @slack/web-api error's code and data.

export type SlackFailure =
  | { readonly kind: 'rate-limited'; readonly retryAfterMs: number }
  /** The message to edit or thread under no longer exists: post a new one instead. */
  | { readonly kind: 'message-gone'; readonly code: string }
  /** Retrying cannot help (not in the channel, archived, bad blocks…): the entry is dropped. */
  | { readonly kind: 'permanent'; readonly code: string }
  | { readonly kind: 'transient' };

const MESSAGE_GONE = new Set([
  'message_not_found',
  'cant_update_message',
  'edit_window_closed',
  'thread_not_found',
]);
const TRANSIENT_CODES = new Set([
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
  'team_added_to_org',
]);
/** When Slack says "rate limited" without Retry-After, wait this long. */
export const DEFAULT_RETRY_AFTER_MS = 1_000;

export function classifySlackFailure(err: unknown): SlackFailure {
  const e = (err ?? {}) as {
    code?: string;
    retryAfter?: number;
    statusCode?: number;
    data?: { error?: string; response_metadata?: { retryAfter?: number } };
  };
  if (e.code === 'slack_webapi_rate_limited_error') {
    const seconds = typeof e.retryAfter === 'number' && e.retryAfter >= 0 ? e.retryAfter : undefined;
    return {
      kind: 'rate-limited',
      retryAfterMs: seconds !== undefined ? seconds * 1000 : DEFAULT_RETRY_AFTER_MS,
    };
  }
  if (e.code === 'slack_webapi_platform_error') {
    const code = e.data?.error ?? 'unknown_error';
    if (code === 'ratelimited' || code === 'rate_limited') {
      const seconds = e.data?.response_metadata?.retryAfter;
      return {
        kind: 'rate-limited',
        retryAfterMs: typeof seconds === 'number' ? seconds * 1000 : DEFAULT_RETRY_AFTER_MS,
      };
    }
    if (MESSAGE_GONE.has(code)) return { kind: 'message-gone', code };
    if (TRANSIENT_CODES.has(code)) return { kind: 'transient' };
    return { kind: 'permanent', code };
  }
  if (e.code === 'slack_webapi_http_error' && typeof e.statusCode === 'number' && e.statusCode < 500) {
    return e.statusCode === 429
      ? { kind: 'rate-limited', retryAfterMs: DEFAULT_RETRY_AFTER_MS }
      : { kind: 'permanent', code: `http_${e.statusCode}` };
  }
  return { kind: 'transient' };
}

/** How long to wait before the next call to a target: the pace, or a rate limit's Retry-After. */
export function waitBeforeSend(now: number, notBefore: number): number {
  return Math.max(0, notBefore - now);
}

/** Slack's answers that mean the bot cannot post in that conversation at all. */
export const CANNOT_POST: ReadonlySet<string> = new Set([
  'not_in_channel',
  'channel_not_found',
  'is_archived',
  'restricted_action',
]);

/** Slack's error code of a failed call: `ratelimited` for a 429, `no answer` when there is none. */
export function slackCode(err: unknown): string {
  const e = err as { code?: string; data?: { error?: string } } | undefined;
  if (e?.code === 'slack_webapi_rate_limited_error') return 'ratelimited';
  return e?.data?.error ?? 'no answer';
}

/** Whether a Slack error means the bot cannot post in that conversation (so retrying cannot help). */
export function cannotPostHere(err: unknown): boolean {
  return CANNOT_POST.has(slackCode(err));
}

/**
 * A response_url takes answers for 30 minutes (and at most 5): it is not used past this age, so the
 * answer goes the next way while there is time. A 404 or 410 from it means expired or used up.
 */
export const RESPONSE_URL_USABLE_MS = 29 * 60_000;

/** Whether a response_url's HTTP status says the answer was taken. */
export function responseUrlTook(status: number): boolean {
  return status >= 200 && status < 300;
}
