import { closedCard, decidedMessage } from '../commands/approvals/render.js';
import type { QueuingNote } from '../commands/approvals/stage-text.js';
import { type ReplyTarget, requesterTarget } from '../commands/kit/reply-port.js';
import { withDeadline } from '../commands/kit/with-deadline.js';
import type { GpuCommand } from '../commands/registry.js';
import type { JobContext } from '../jobs/job-data.js';
import type { MessageRef } from '../jobs/message-ref.js';
import { MaybeQueuedError, NotReplicatedError } from '../jobs/replicated.js';
import { formatCost } from '../pricing/cost.js';
import type { ApprovalRequest } from '../store/approvals.js';
import { auditFieldsOf } from '../store/audit.js';
import type { Sealer } from '../store/sealed.js';
import type { AcceptDeps } from './accept-kit.js';
import { enqueueRequest } from './enqueue-request.js';
import type { ChatMessage } from './ports.js';

// The approved half of a request's lifecycle (docs/reliability.md, "One lifecycle per request"). The
// decision stores an enqueue intent with a deadline (store/approvals.ts: stage `queuing`); from there
// one function moves the request on, whoever calls it: the click that approved it, a later click on
// its card, or the sweeper. Its job is added under the approval's id (so adding it twice makes one
// job), and only once it is on the queue do the messages say "Queued". While Redis cannot keep the job
// on two servers the request stays queuing and its messages say it runs once it can; past its deadline
// it lapses, with a message, and never runs. A worker marks it running before acting (worker side:
// workers/process-command-job.ts), so a lapsed request never runs and a run one is never queued again,
// however long ago BullMQ forgot the job's id.

/** What a decision's messages need besides posting: edits and private notes. The Slack layer implements it. */
export interface DecisionPorts {
  /** Edits a message the bot posted. */
  update(ref: MessageRef, message: ChatMessage): Promise<void>;
  /**
   * The requester's own message edited, else a private answer (response_url, an ephemeral where they
   * asked, a DM where the bot cannot post: commands/kit/reply-port.ts).
   */
  show(target: ReplyTarget, message: ChatMessage, ref?: MessageRef): Promise<void>;
  /** A Workflow Builder step waiting for a denied, expired or lapsed request fails with why. */
  failWaitingStep(request: ApprovalRequest<GpuCommand>): Promise<void>;
}

export interface LifecycleDeps extends AcceptDeps {
  readonly chat: DecisionPorts;
  readonly sealer?: Sealer | undefined;
  /** How long an approved request may wait for its job to be stored before it lapses; default 30 min. */
  readonly runWithinMs?: number | undefined;
  /** Why no change can be stored now (Redis has no replica), or undefined (jobs/replicated.ts). */
  readonly degraded?: (() => Promise<string | undefined>) | undefined;
  /** What one sweeper pass did, for gpuops_sweeper_requests_total (composed in app/). */
  readonly countSwept?: ((counts: Readonly<Record<ApprovedOutcome, number>>) => void) | undefined;
}

export const DEFAULT_RUN_WITHIN_MS = 30 * 60_000;
/** How long whoever claimed an enqueue intent has it to themselves (the click that decided, a sweep). */
export const CLAIM_MS = 15_000;
/** A response_url lives 30 minutes: an answer after that goes by chat.postEphemeral instead. */
const RESPONSE_URL_LIFETIME_MS = 25 * 60_000;

export type ApprovedOutcome = 'queued' | 'waiting' | 'lapsed' | 'gone';

/** The deadline of an approved request's enqueue (one approved before the lifecycle: from its decision). */
export function runByOf(deps: LifecycleDeps, request: ApprovalRequest<GpuCommand>): number {
  return request.runBy ?? (request.decision?.at ?? 0) + (deps.runWithinMs ?? DEFAULT_RUN_WITHIN_MS);
}

export async function editCard(
  deps: LifecycleDeps,
  request: ApprovalRequest<GpuCommand>,
  note?: QueuingNote,
): Promise<void> {
  if (!request.card) return;
  await deps.chat
    .update(request.card, closedCard(request, note))
    .catch((err: unknown) =>
      deps.log.warn({ err, approvalId: request.id }, 'could not edit an approval card'),
    );
}

/** The requester's message (or a private note) after the decision; never once the job owns it. */
export async function tellRequester(
  deps: LifecycleDeps,
  request: ApprovalRequest<GpuCommand>,
  note?: QueuingNote,
): Promise<void> {
  await deps.chat
    .show(requesterTarget(request), decidedMessage(request, note), request.requesterMessage)
    .catch((err: unknown) =>
      deps.log.warn({ err, approvalId: request.id }, 'could not tell the requester the decision'),
    );
}

export async function discardSealed(
  deps: LifecycleDeps,
  request: ApprovalRequest<GpuCommand>,
): Promise<void> {
  for (const ref of Object.values(request.sealed ?? {})) {
    if (ref) await deps.sealer?.discard(ref).catch(() => {});
  }
}

/** The approved request as one job, its id the approval's. */
async function enqueueApproved(deps: LifecycleDeps, request: ApprovalRequest<GpuCommand>): Promise<void> {
  const { responseUrl, ...rest } = request.ctx;
  // Its response_url may have expired while it waited; the job then answers by chat.postEphemeral.
  const ctx: JobContext =
    responseUrl && Date.now() - request.ctx.requestedAt < RESPONSE_URL_LIFETIME_MS ? request.ctx : rest;
  await enqueueRequest(deps, request.command, ctx, {
    approvalId: request.id,
    ...(request.requesterMessage ? { message: request.requesterMessage } : {}),
    ...(request.sealed ? { sealed: request.sealed } : {}),
    ...(request.lease
      ? {
          lease: {
            ...request.lease,
            ...(request.cost ? { cost: formatCost(request.cost).slice(0, 200) } : {}),
          },
        }
      : {}),
  });
}

/** The store could not keep the job on two servers (rather than being unreachable). */
function noReplica(err: unknown): boolean {
  if (err instanceof NotReplicatedError) return true;
  return err instanceof MaybeQueuedError && err.cause instanceof NotReplicatedError;
}

/**
 * Moves an approved request whose enqueue intent the caller has claimed one step on: its job onto the
 * queue (then "Queued" on the card), or lapsed past its deadline (then both messages say it did not
 * run), or left queuing when the job cannot be stored on two servers now (its messages say so once).
 * Idempotent: the job id is the approval's, and every stage change is one atomic step in Redis.
 */
export async function driveApproved(
  deps: LifecycleDeps,
  request: ApprovalRequest<GpuCommand>,
  now = Date.now(),
): Promise<ApprovedOutcome> {
  const { approvals } = deps.guardrails;
  // On the queue already (a run whose mark was lost, or an add whose answer was): only the mark is missing.
  if (await deps.queue.getJob(request.id)) return queued(deps, request);
  if (now >= runByOf(deps, request)) return lapse(deps, request);
  const why = await deps.degraded?.().catch(() => undefined);
  let held = why !== undefined;
  if (!held) {
    try {
      await enqueueApproved(deps, request);
      return queued(deps, request);
    } catch (err) {
      deps.log.warn(
        { err, approvalId: request.id },
        'could not queue an approved request; the sweeper retries',
      );
      held = noReplica(err);
    }
  }
  // Told once: a sweep that finds it still waiting edits nothing.
  if (held && !request.held) {
    await tellRequester(deps, request, 'no-replica');
    await editCard(deps, request, 'no-replica');
    await withDeadline(approvals.markHeld(request.id), 1_500, 'Redis').catch(() => {});
  }
  // This attempt is over: the next sweep may try again at once, not when the claim runs out.
  await withDeadline(approvals.releaseEnqueue(request.id), 1_500, 'Redis').catch(() => {});
  return 'waiting';
}

async function queued(deps: LifecycleDeps, request: ApprovalRequest<GpuCommand>): Promise<ApprovedOutcome> {
  const stage = await deps.guardrails.approvals.advance(request.id, 'queued');
  if (stage === 'not-approved') return 'gone';
  // The requester's message is the job's to edit now; the approvers' card is still ours.
  await editCard(deps, { ...request, stage });
  return 'queued';
}

async function lapse(deps: LifecycleDeps, request: ApprovalRequest<GpuCommand>): Promise<ApprovedOutcome> {
  const stage = await deps.guardrails.approvals.advance(request.id, 'lapsed');
  if (stage === 'not-approved') return 'gone';
  // A worker took it just before: it runs, and says so itself.
  if (stage !== 'lapsed') return queued(deps, request);
  const lapsed = { ...request, stage } as const;
  await tellRequester(deps, lapsed);
  await editCard(deps, lapsed);
  await discardSealed(deps, lapsed);
  await deps.chat
    .failWaitingStep(lapsed)
    .catch((err: unknown) => deps.log.warn({ err, approvalId: request.id }, 'could not fail a waiting step'));
  await deps.guardrails.audit
    .append({
      event: 'outcome',
      actor: request.requester,
      ...auditFieldsOf(request.command),
      ...(request.ctx.projectId ? { project: request.ctx.projectId } : {}),
      outcome: 'failed',
      approvalId: request.id,
      channel: request.ctx.channelId,
      parameters: { detail: 'Approved, but its job could not be stored on two servers before its deadline.' },
    })
    .catch((err: unknown) =>
      deps.log.warn({ err, approvalId: request.id }, 'could not audit a lapsed request'),
    );
  return 'lapsed';
}

/**
 * The sweeper (the `requests.sweep` system job): every approved request whose job is not known to be
 * on the queue, driven one step on, unless someone else holds it (the click deciding it just now).
 */
export async function sweepApproved(deps: LifecycleDeps, now = Date.now()): Promise<string> {
  const { approvals } = deps.guardrails;
  const counts: Record<ApprovedOutcome, number> = { queued: 0, waiting: 0, lapsed: 0, gone: 0 };
  for (const { id } of await approvals.listQueuing()) {
    if (!(await approvals.claimEnqueue(id, CLAIM_MS, now))) continue;
    const request = await approvals.get(id);
    const outcome = request ? await driveApproved(deps, request, now) : await forget(deps, id);
    counts[outcome] += 1;
  }
  deps.countSwept?.(counts);
  return `approved requests: ${counts.queued} queued, ${counts.waiting} still waiting, ${counts.lapsed} lapsed`;
}

/** A request whose record is gone (or no longer reads) leaves the index. */
async function forget(deps: LifecycleDeps, id: string): Promise<ApprovedOutcome> {
  await deps.guardrails.approvals.advance(id, 'lapsed');
  return 'gone';
}
