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
// when it is made, claimed by its maker (the listener posts after its acknowledgement); the sweeper
// takes the claim only once nobody holds it, so a card is never posted twice. What Slack refused for
// now (a 429, a 5xx, no answer) stays recorded and the sweeper posts it on its next pass, through the
// workers' client, which waits out Slack's Retry-After; what Slack can never take (not in the channel)
// is given up, and the requester is told so. A requester's message that lands only after the request
// was decided is taken back.

/** How long one claim on a request's posts lasts: longer than the workers' client waits out 429s. */
export const POST_CLAIM_MS = 6 * 60_000;

/**
 * How long a request's maker holds the claim on its posts from when it stored the request, before it
 * starts posting: it acknowledges Slack first (3 s at most). Should the maker be gone (a crash, an
 * answer given up on), the sweeper posts them after this.
 */
export const MAKER_POST_CLAIM_MS = 15_000;

export interface Posted {
  readonly card?: MessageRef;
  readonly message?: MessageRef;
  /** Slack's code when the card can never be posted there (the bot is not in the channel…). */
  readonly cardProblem?: string;
  /**
   * The card is not up yet, but will be (the sweeper posts it), and why: Slack asked to slow down,
   * Slack did not answer, or gpuops could not reach Redis to claim or record the posting.
   */
  readonly cardLater?: CardLater;
}

export type CardLater = 'slack-busy' | 'slack-down' | 'store';

/** Slack may take it later: a rate limit or an outage, not a refusal. */
function worthRetrying(err: unknown): boolean {
  return laterBecause(err) !== undefined;
}

function laterBecause(err: unknown): CardLater | undefined {
  const kind = classifySlackFailure(err).kind;
  return kind === 'rate-limited' ? 'slack-busy' : kind === 'transient' ? 'slack-down' : undefined;
}

/**
 * Posts what of `parts` the request does not show yet, if this caller wins the claim (undefined when
 * someone else holds it): its maker (`maker`) takes up the claim it has held since it made it, a sweep
 * one nobody holds. Never posts a part twice; records what is left for the sweeper.
 */
export async function postApproval(
  deps: AcceptDeps,
  request: ApprovalRequest<GpuCommand>,
  parts: readonly UnpostedPart[],
  { now = Date.now(), maker = false }: { readonly now?: number; readonly maker?: boolean } = {},
): Promise<Posted | undefined> {
  const { approvals } = deps.guardrails;
  if (parts.length === 0) return undefined;
  const claimed = await withDeadline(
    approvals.claimPosting(request.id, POST_CLAIM_MS, now, maker ? request.createdAt : undefined),
    REDIS_MS,
    'Redis',
  );
  if (!claimed) return undefined;
  const left: UnpostedPart[] = [];
  let message: MessageRef | undefined;
  let card: MessageRef | undefined;
  let cardProblem: string | undefined;
  let cardLater: CardLater | undefined;
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
    if (message) message = await keepIfPending(deps, request.id, message);
  }
  if (parts.includes('card') && !request.card) {
    try {
      card = await deps.ports.post(request.approvalChannel, approvalCard(request));
    } catch (err) {
      cardLater = laterBecause(err);
      if (cardLater) left.push('card');
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
    ...(cardLater ? { cardLater } : {}),
  };
}

/**
 * Records the requester's message with the request, or takes it back when the request was decided or
 * expired while it was being posted (a sweep waiting out Slack's Retry-After): its decision found no
 * message to edit and answered privately, and its job posts its own, so this one would say "Waiting
 * for approval" for good. Kept when Redis does not answer: a message too many beats one lost.
 */
async function keepIfPending(
  deps: AcceptDeps,
  id: string,
  message: MessageRef,
): Promise<MessageRef | undefined> {
  const kept = await withDeadline(
    deps.guardrails.approvals.setRequesterMessage(id, message),
    REDIS_MS,
    'Redis',
  ).catch((err: unknown) => {
    deps.log.warn({ err, approvalId: id }, 'could not record what was posted for an approval');
    return true;
  });
  if (kept) return message;
  await deps.ports
    .remove(message)
    .catch((err: unknown) =>
      deps.log.warn({ err, approvalId: id }, 'could not take back a waiting message of a decided request'),
    );
  return undefined;
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
    const result = await postApproval(deps, request, request.unposted ?? [], { now }).catch(
      (err: unknown) => {
        deps.log.warn({ err, approvalId: request.id }, 'could not post an approval later');
        return undefined;
      },
    );
    if (result?.cardLater) waiting += 1;
    else if (result) posted += 1;
  }
  return `approval cards: ${posted} posted late, ${waiting} still waiting for Slack`;
}
