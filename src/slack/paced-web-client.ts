import { setTimeout as sleep } from 'node:timers/promises';
import { type WebAPICallResult, WebClient, type WebClientOptions } from '@slack/web-api';
import { classifySlackFailure } from '../commands/kit/slack-failure.js';

// The workers' Web API client. The SDK's default answer to a 429 pauses its whole request queue for
// Retry-After: one busy channel would then hold up every job of the process. Here a 429 is rejected by
// the SDK and waited out for that conversation only (as the watch outbox does): calls to the same
// conversation wait until the limit ends, calls elsewhere go on at once.

/** A job gives up on a conversation that stays rate-limited after this many waits. */
const MAX_WAITS = 5;
/** And never waits longer than this at once, whatever Retry-After says. */
const MAX_WAIT_MS = 60_000;

function conversationOf(method: string, options: Record<string, unknown> | undefined): string {
  const channel = options?.channel ?? options?.channel_id ?? options?.users;
  return typeof channel === 'string' ? `${method} ${channel}` : method;
}

export class ConversationPacedWebClient extends WebClient {
  /** Method and conversation → when Slack's rate limit there ends. */
  private readonly limitedUntil = new Map<string, number>();

  constructor(token: string | undefined, options: WebClientOptions = {}) {
    super(token, { ...options, rejectRateLimitedCalls: true });
  }

  override async apiCall(method: string, options?: Record<string, unknown>): Promise<WebAPICallResult> {
    const key = conversationOf(method, options);
    for (let waits = 0; ; waits++) {
      const wait = (this.limitedUntil.get(key) ?? 0) - Date.now();
      if (wait > 0) await sleep(Math.min(wait, MAX_WAIT_MS));
      try {
        return await super.apiCall(method, options);
      } catch (err) {
        const failure = classifySlackFailure(err);
        if (failure.kind !== 'rate-limited' || waits >= MAX_WAITS) throw err;
        this.limitedUntil.set(key, Date.now() + failure.retryAfterMs);
      }
    }
  }
}
