import { approvalCard, waitingMessage } from '../commands/approvals/render.js';
import { classifySlackFailure, slackCode } from '../commands/kit/slack-failure.js';
import { withDeadline } from '../commands/kit/with-deadline.js';
import type { GpuCommand } from '../commands/registry.js';
import type { MessageRef } from '../jobs/message-ref.js';
import type { UnpostedPart } from '../store/approval-record.js';
import type { ApprovalRequest } from '../store/approvals.js';
import { type AcceptDeps, REDIS_MS } from './accept-kit.js';

// Showing a pending request: the requester's "Waiting for approval" message, then the approvers' card
// (docs/reliability.md, "A card Slack would not take"). What is to be posted is stored with the request
// when it is made; whoever posts claims it first (the listener after its acknowledgement, or the
// sweeper), so a card is never posted twice. What Slack refused for now (a 429, a 5xx, no answer) stays
// recorded and the sweeper posts it on its next pass, through the workers' client, which waits out
// Slack's Retry-After; what Slack can never take (not in the channel) is given up, and the requester is
// told so.

/** How long one claim on a request's posts lasts: longer than the workers' client waits out 429s. */
export const POST_CLAIM_MS = 6 * 60_000;

export interface Posted {
  readonly card?: MessageRef;
  readonly message?: MessageRef;
  /** Slack's code when the card can never be posted there (the bot is not in the channel…). */
  readonly cardProblem?: string;
  /** The card is not up yet, but will be: Slack asked to slow down or did not answer. */
  readonly cardLater: boolean;
}

/** Slack may take it later: a rate limit or an outage, not a refusal. */
function worthRetrying(err: unknown): boolean {
  const kind = classifySlackFailure(err).kind;
  return kind === 'rate-limited' || kind === 'transient';
}

/**
 * Posts what of `parts` the request does not show yet, if this caller wins the claim (undefined when
 * someone else holds it). Never posts a part twice; records what is left for the sweeper.
 */
export async function postApproval(
  deps: AcceptDeps,
  request: ApprovalRequest<GpuCommand>,
  parts: readonly UnpostedPart[],
  now = Date.now(),
): Promise<Posted | undefined> {
  const { approvals } = deps.guardrails;
  if (parts.length === 0) return undefined;
  const claimed = await withDeadline(
    approvals.claimPosting(request.id, POST_CLAIM_MS, now),
    REDIS_MS,
    'Redis',
  );
  if (!claimed) return undefined;
  const left: UnpostedPart[] = [];
  let message: MessageRef | undefined;
  let card: MessageRef | undefined;
  let cardProblem: string | undefined;
  // The requester's message first: once the card is up, everything the approvers act on is there.
  if (parts.includes('message') && !request.requesterMessage) {
    try {
      message = await deps.ports.post(request.ctx.channelId, waitingMessage(request));
    } catch (err) {
      if (worthRetrying(err)) left.push('message');
      deps.log.warn(
        { code: slackCode(err), approvalId: request.id, later: worthRetrying(err) },
        "could not post the requester's waiting message",
      );
    }
    if (message && !(await kept(deps, request.id, message))) message = undefined;
  }
  if (parts.includes('card') && !request.card) {
    try {
      card = await deps.ports.post(request.approvalChannel, approvalCard(request));
    } catch (err) {
      if (worthRetrying(err)) left.push('card');
      else cardProblem = slackCode(err);
      deps.log.warn(
        { code: slackCode(err), approvalId: request.id, approvalChannel: request.approvalChannel },
        'could not post an approval card',
      );
    }
    if (card) await record(deps, request.id, () => approvals.setCard(request.id, card!));
  }
  // What is left, for the next sweep; this also ends the claim. Should it not be written, the claim
  // runs out and the next sweep finds the parts posted (their refs) or still due.
  await record(deps, request.id, () => approvals.setUnposted(request.id, left));
  return {
    ...(card ? { card } : {}),
    ...(message ? { message } : {}),
    ...(cardProblem ? { cardProblem } : {}),
    cardLater: left.includes('card'),
  };
}

/**
 * Records the requester's message with the request; false when the request was decided while the
 * message was on its way (a late post, after Slack's Retry-After). The decision then told the requester
 * without it and the job shows its progress in a message of its own, so this one, which says the
 * request still waits, is taken back rather than left in the channel for good.
 */
async function kept(deps: AcceptDeps, id: string, message: MessageRef): Promise<boolean> {
  const recorded = await withDeadline(
    deps.guardrails.approvals.setRequesterMessage(id, message),
    REDIS_MS,
    'Redis',
  ).catch((err: unknown) => {
    deps.log.warn({ err, approvalId: id }, 'could not record what was posted for an approval');
    return true;
  });
  if (recorded) return true;
  await deps.ports
    .remove(message)
    .catch((err: unknown) =>
      deps.log.warn({ err, approvalId: id }, "could not take back a requester's late waiting message"),
    );
  return false;
}

async function record(deps: AcceptDeps, id: string, write: () => Promise<void>): Promise<void> {
  await withDeadline(write(), REDIS_MS, 'Redis').catch((err: unknown) =>
    deps.log.warn({ err, approvalId: id }, 'could not record what was posted for an approval'),
  );
}

/** The sweeper's part: posts every pending request's unposted message and card. Never throws. */
export async function sweepUnposted(deps: AcceptDeps, now = Date.now()): Promise<string> {
  let posted = 0;
  let waiting = 0;
  const due = await deps.guardrails.approvals.listUnposted(now).catch((err: unknown) => {
    deps.log.warn({ err }, 'could not list the approvals still to post');
    return [];
  });
  for (const request of due) {
    const result = await postApproval(deps, request, request.unposted ?? [], now).catch((err: unknown) => {
      deps.log.warn({ err, approvalId: request.id }, 'could not post an approval later');
      return undefined;
    });
    if (result?.cardLater) waiting += 1;
    else if (result) posted += 1;
  }
  return `approval cards: ${posted} posted late, ${waiting} still waiting for Slack`;
}
