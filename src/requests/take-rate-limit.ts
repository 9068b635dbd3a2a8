import { withDeadline } from '../commands/kit/with-deadline.js';
import type { JobContext } from '../jobs/job-data.js';
import { rateLimitedAnswer } from '../store/rate-limiter.js';
import { type AcceptDeps, REDIS_MS } from './accept-kit.js';

// The policy's rate limits, taken in the request pipeline so that every door counts the same: typed
// `/gpu`, forms, Home buttons, list pages, idle-alert and lease buttons, workflow steps and the answers
// the listener gives itself. A person switching doors draws on the same count (docs/policy.md).

/** A request refused because its person or channel reached the policy's rate: nothing was started. */
export interface RateLimited {
  readonly status: 'refused';
  /** One Slack mrkdwn sentence: what happened and when to try again. */
  readonly message: string;
  /** The same in plain text, for places that show no formatting (form field errors, step errors). */
  readonly plain: string;
  readonly retryAfterMs: number;
}

/**
 * Counts one request of the person (and of the channel it is made for; a workflow step counts for its
 * person only), or the refusal when either reached its limit. Refusals are not counted.
 */
export async function takeRateLimit(
  deps: AcceptDeps,
  ctx: Pick<JobContext, 'userId' | 'channelId' | 'step' | 'schedule'>,
): Promise<RateLimited | undefined> {
  const limiter = deps.guardrails.rateLimiter;
  // A schedule's firing is no door a person acts through: it was checked and agreed when it was made,
  // and a tag schedule acting on forty machines at once must not be cut off at the thirtieth.
  if (!limiter || ctx.schedule !== undefined) return undefined;
  // A step's channel is only where it reports; the workflow, not that channel, sent it.
  const channel = ctx.step ? undefined : ctx.channelId;
  const decision = await withDeadline(limiter.take(ctx.userId, channel), REDIS_MS, 'Redis');
  if (decision.ok) return undefined;
  deps.log.debug({ user: ctx.userId, channel, who: decision.who }, 'rate limited');
  const message = rateLimitedAnswer(decision);
  return {
    status: 'refused',
    message,
    plain: message.replaceAll('`', ''),
    retryAfterMs: decision.retryAfterMs,
  };
}
