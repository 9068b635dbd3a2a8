import { slackDate } from '../commands/approvals/render.js';
import { withDeadline } from '../commands/kit/with-deadline.js';
import { deliveryOf, describeCommand, type GpuCommand } from '../commands/registry.js';
import type { CommandCost } from '../commands/spec.js';
import type { JobContext, LeaseTerms } from '../jobs/job-data.js';
import type { MessageRef } from '../jobs/message-ref.js';
import {
  type ApprovalNeed,
  approvalChannelFor,
  describeApprovers,
  namedApprovers,
} from '../policy/decide.js';
import type { Guardrails } from '../policy/guardrails.js';
import { escapeText } from '../render/job-message.js';
import type { UnpostedPart } from '../store/approval-record.js';
import { approvalIdFor, SYSTEM_ACTOR } from '../store/approvals.js';
import { homeOpenedBy } from '../store/home-state.js';
import { type AcceptDeps, type AcceptExtra, pricedRequestAudit, REDIS_MS, record } from './accept-kit.js';
import { GaveUpError } from './add-gate.js';
import {
  CHANGE_REPEAT_SECONDS,
  dedupeSeconds,
  type EnqueueResult,
  requestFingerprint,
  requestTarget,
} from './enqueue-request.js';
import { type CardLater, MAKER_POST_CLAIM_MS, type Posted, postApproval } from './post-approval.js';

// The approval step of the request pipeline: a request that waits for an approver is stored once (a
// double submission finds the first), its card goes to the approval channel and the requester sees
// where it went. With deferPosts the Slack posts wait until the caller has acknowledged Slack.

export interface PendingApproval {
  readonly status: 'pending-approval';
  readonly approvalId: string;
  /** Where the card went. */
  readonly approvalChannel: string;
  /** The card, unless Slack refused it (the notice then says so). */
  readonly card?: MessageRef;
  /** The requester's message in their channel (channel-delivered kinds). */
  readonly message?: MessageRef;
  /** What to tell the requester, ephemerally: why it waits, where it went, until when. */
  readonly notice: string;
  /**
   * With `deferPosts`: posts the card and the requester's message, after the acknowledgement. Resolves
   * with a corrected notice when the card could not be posted, else undefined. Never throws.
   */
  readonly followUp?: () => Promise<string | undefined>;
}

/** What accept-request.ts found out about a request before it asks for an approval. */
export interface Assessment {
  readonly cost?: CommandCost;
  readonly need: ApprovalNeed;
  readonly lease?: LeaseTerms;
  readonly capacity?: string;
  readonly capacityAt?: number;
  readonly project?: string;
  /** Only these may decide it (a budget's owners, when it would take a forecast over), not the policy's approvers. */
  readonly owners?: readonly string[];
}

/** Who may decide, in words: a budget's owners, or the policy's approvers for the kind. */
function approversOf(guardrails: Guardrails, command: GpuCommand, assessment: Assessment): string {
  if (assessment.owners?.length) {
    return `the budget's owners (${assessment.owners.map((u) => `<@${u}>`).join(', ')})`;
  }
  return describeApprovers(guardrails.policy, command.kind);
}

/** Sends a request to its approvers: the request in Redis, the card, the requester's message. */
export async function requestApproval(
  deps: AcceptDeps,
  guardrails: Guardrails,
  command: GpuCommand,
  ctx: JobContext,
  assessment: Assessment,
  extra: AcceptExtra,
): Promise<PendingApproval | Extract<EnqueueResult, { status: 'duplicate' }>> {
  const { policy, approvals } = guardrails;
  const approvalId = approvalIdFor(ctx, command);
  // From here the request may be stored, and decided: not once the caller gave up waiting.
  if (extra.gate && !extra.gate.begin()) throw new GaveUpError();
  // The same delivery sent again (same Slack trigger) is told so, and makes no card.
  if (extra.trigger) {
    const seen = await withDeadline(
      deps.store.claimTrigger(extra.trigger.id, approvalId, extra.trigger.seconds),
      REDIS_MS,
      'Redis',
    );
    if (seen !== undefined) return { status: 'duplicate', jobId: seen, replay: true };
  }
  // A double submission finds the first request instead of making a second card, unless something
  // else was asked of the same machine or cluster since (then it is a new request).
  const target = requestTarget(command, ctx);
  const holder = await withDeadline(
    deps.store.claimRequest(
      requestFingerprint(command, ctx),
      approvalId,
      dedupeSeconds(command),
      target ? { id: target, seconds: CHANGE_REPEAT_SECONDS } : undefined,
    ),
    REDIS_MS,
    'Redis',
  );
  if (holder !== undefined) return { status: 'duplicate', jobId: holder };
  const approvalChannel = approvalChannelFor(policy, ctx.channelId);
  // What is to be shown is stored with the request, so a post Slack refuses now is posted later.
  const parts: UnpostedPart[] =
    deliveryOf(command.kind) === 'channel' && ctx.step?.quiet !== true ? ['message', 'card'] : ['card'];
  const { created, request } = await withDeadline(
    approvals.create({
      command,
      ctx,
      ...(assessment.cost ? { cost: assessment.cost.estimate } : {}),
      reasons: assessment.need.reasons,
      approvalChannel,
      expiresAfterSeconds: policy.approvals.expiresAfterSeconds,
      unposted: parts,
      makerClaimMs: MAKER_POST_CLAIM_MS,
      ...(assessment.lease
        ? {
            lease: {
              seconds: assessment.lease.seconds,
              remindBeforeSeconds: assessment.lease.remindBeforeSeconds,
            },
          }
        : {}),
      ...(extra.sealed ? { sealed: extra.sealed } : {}),
      display: {
        ...(assessment.project ? { project: assessment.project } : {}),
        ...(assessment.capacity ? { capacity: assessment.capacity } : {}),
        ...(assessment.capacityAt !== undefined ? { capacityAt: assessment.capacityAt } : {}),
        approvers: approversOf(guardrails, command, assessment),
        ...(assessment.owners?.length ? { owners: [...assessment.owners] } : {}),
      },
    }),
    REDIS_MS,
    'Redis',
  );
  if (!created) return { status: 'duplicate', jobId: approvalId };
  // On a replicated Redis, "sent for approval" means the request survives its primary, as a queued job
  // does: otherwise its card could be decided on a request a failover lost. Taken back if not.
  if (deps.replicated) {
    try {
      await withDeadline(deps.replicated(), REDIS_MS, 'the Redis replicas');
    } catch (err) {
      await approvals
        .decide(approvalId, {
          state: 'denied',
          by: SYSTEM_ACTOR,
          reason: 'gpuops could not store it on two servers',
        })
        .catch(() => {});
      throw err;
    }
  }

  const what = `\`${escapeText(describeCommand(command))}\``;
  const why = assessment.need.reasons.join(' ');
  const where = `<#${approvalChannel}>`;
  const sentNotice = `:raised_hand: ${what} needs an approval: ${why} I sent it to ${where}, where ${approversOf(guardrails, command, assessment)} can approve or deny it until ${slackDate(request.expiresAt)}. You will see the decision on your request.`;
  const problemNotice = (problem: string) =>
    `:raised_hand: ${what} needs an approval: ${why} :warning: I could not post it to ${where} (Slack said "${problem}"): invite gpuops there. Approvers can still decide it with \`/gpu approvals\` until ${slackDate(request.expiresAt)}.`;

  const laterNotice = (later: CardLater) =>
    `:raised_hand: ${what} needs an approval: ${why} :hourglass_flowing_sand: ${LATER_BECAUSE[later]}, so its card will be posted to ${where} shortly (gpuops keeps trying); ${describeApprovers(policy, command.kind)} can approve or deny it there, or with \`/gpu approvals\`, until ${slackDate(request.expiresAt)}. You will see the decision on your request.`;
  const noticeFor = (posted: Posted | undefined) =>
    posted?.cardLater
      ? laterNotice(posted.cardLater)
      : posted?.cardProblem
        ? problemNotice(posted.cardProblem)
        : undefined;

  // The card and the requester's message: after the acknowledgement when the caller defers its posts.
  // What Slack does not take now stays recorded and the sweeper posts it (post-approval.ts).
  const post = async (): Promise<Posted | undefined> => {
    const posted = await postApproval(deps, request, parts, { maker: true }).catch((err: unknown) => {
      deps.log.warn({ err, approvalId }, 'could not post an approval; the sweeper posts it');
      return { cardLater: 'store' } satisfies Posted;
    });
    await refreshApproverHomes(deps, guardrails, command, ctx.userId);
    return posted;
  };
  guardrails.onApproval?.('requested');
  await record(deps, guardrails, {
    ...pricedRequestAudit(command, ctx, assessment.cost?.estimate),
    outcome: 'needs-approval',
    approvalId,
  });

  if (extra.deferPosts) {
    return {
      status: 'pending-approval',
      approvalId,
      approvalChannel,
      notice: sentNotice,
      followUp: async () => noticeFor(await post()),
    };
  }
  const posted = await post();
  return {
    status: 'pending-approval',
    approvalId,
    approvalChannel,
    ...(posted?.card ? { card: posted.card } : {}),
    ...(posted?.message ? { message: posted.message } : {}),
    notice: noticeFor(posted) ?? sentNotice,
  };
}

/** At most this many approvers' Home tabs are published again for one new request. */
export const HOME_REFRESH_MAX_APPROVERS = 20;

/** Why the card is not up yet, in the requester's notice. */
const LATER_BECAUSE: Record<CardLater, string> = {
  'slack-busy': 'Slack asked gpuops to slow down',
  'slack-down': 'Slack did not take the card just now',
  store: 'gpuops could not reach its Redis to post the card just now',
};

/**
 * A new request waits for them: the Home tab of each approver named in the policy who opened it
 * before shows it in "Waiting for your approval" without being opened again. Never throws.
 */
async function refreshApproverHomes(
  deps: AcceptDeps,
  guardrails: Guardrails,
  command: GpuCommand,
  requesterId: string,
): Promise<void> {
  if (!deps.ports.refreshHomes) return;
  try {
    const named = namedApprovers(guardrails.policy, command.kind, requesterId, HOME_REFRESH_MAX_APPROVERS);
    const opened = await withDeadline(homeOpenedBy(deps.store, named), REDIS_MS, 'Redis');
    const users = named.filter((_, i) => opened[i] !== undefined);
    if (users.length > 0) await deps.ports.refreshHomes(users);
  } catch (err) {
    deps.log.warn({ err }, "could not refresh the approvers' Home tabs");
  }
}
