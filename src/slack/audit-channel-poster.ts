import type { WebClient } from '@slack/web-api';
import { auditLine } from '../commands/audit/render.js';
import { classifySlackFailure } from '../commands/kit/slack-failure.js';
import type { Logger } from '../log/logger.js';
import type { AuditEntry } from '../store/audit.js';

// Posts each audit entry to the policy's audit channel, a copy of what the audit trail in Redis
// already holds. The SDK's default answer to a 429 pauses and retries behind an unbounded queue, so a
// busy trail would pile up posts in memory for as long as Slack limits the channel. Here a 429 is
// rejected (the client is built with rejectRateLimitedCalls) and entries are skipped until its
// Retry-After ends, and at most MAX_PENDING posts are ever in flight: the channel may miss a line
// (the log says so, and /gpu audit has every entry), the process never piles them up.

/** Posts in flight at once; an entry beyond them is skipped rather than queued. */
export const MAX_PENDING = 20;

export type AuditChannelPoster = (entry: AuditEntry) => Promise<void>;

export function createAuditChannelPoster(
  slack: WebClient,
  channel: string,
  log: Logger,
  now: () => number = Date.now,
): AuditChannelPoster {
  let limitedUntil = 0;
  let pending = 0;
  let skipped = 0;
  const skip = (why: string) => {
    skipped += 1;
    if (skipped === 1)
      log.warn(
        { channel },
        `audit entries are not posted to the audit channel: ${why} (they stay on the audit trail, /gpu audit)`,
      );
  };
  return async (entry) => {
    if (now() < limitedUntil) return skip('Slack rate-limits it');
    if (pending >= MAX_PENDING) return skip(`${MAX_PENDING} posts are already waiting`);
    if (skipped > 0) {
      log.info({ channel, skipped }, 'posting to the audit channel again');
      skipped = 0;
    }
    pending += 1;
    try {
      await slack.chat.postMessage({ channel, text: auditLine(entry) });
    } catch (err) {
      const failure = classifySlackFailure(err);
      if (failure.kind !== 'rate-limited') throw err;
      limitedUntil = now() + failure.retryAfterMs;
      skip(`Slack rate-limits it for ${Math.ceil(failure.retryAfterMs / 1000)} s`);
    } finally {
      pending -= 1;
    }
  };
}
