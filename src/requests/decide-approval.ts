import { slackDate, who } from '../commands/approvals/render.js';
import type { GpuCommand } from '../commands/registry.js';
import { type ApprovalRequest, SYSTEM_ACTOR } from '../store/approvals.js';
import { type AuditInput, auditFieldsOf } from '../store/audit.js';
import {
  CLAIM_MS,
  DEFAULT_RUN_WITHIN_MS,
  discardSealed,
  driveApproved,
  editCard,
  type LifecycleDeps,
  tellRequester,
} from './drive-approved.js';

// An approver's decision on a request, from whichever surface it came (a card's buttons, the Home tab,
// the Deny form): checked at click time, made in one atomic Redis step (store/approvals.ts) together
// with its audit entry and, for an approval, its enqueue intent, so however many people click at once
// one decision wins and one job is queued. The Slack listeners only translate payloads into this.

/** A card still showing buttons this long after its decision missed its edit: the next click repairs it. */
const REPAIR_AFTER_MS = 10_000;

const LAPSED_NOTE = ' It never reached the queue and is too old to run now: the requester can ask again.';

export type Decided = { readonly ok: true } | { readonly ok: false; readonly message: string };

export interface DecisionInput {
  readonly id: string;
  readonly clicker: string;
  readonly state: 'approved' | 'denied';
  readonly reason?: string;
  /** Whether the clicker may decide this request, checked now; the refusal in words otherwise. */
  readonly mayDecide: (request: ApprovalRequest<GpuCommand>) => Promise<string | undefined>;
}

export function decisionAudit(
  request: ApprovalRequest<GpuCommand>,
  decider: string,
  outcome: string,
  at = request.decision?.at ?? Date.now(),
): AuditInput {
  return {
    event: 'decision',
    actor: request.requester,
    approver: decider,
    ...auditFieldsOf(request.command),
    ...(request.ctx.projectId ? { project: request.ctx.projectId } : {}),
    outcome,
    approvalId: request.id,
    channel: request.approvalChannel,
    durationMs: Math.max(0, at - request.createdAt),
  };
}

/** A click the policy refused, on the audit trail with what was tried. */
export async function recordRefusal(
  deps: LifecycleDeps,
  request: ApprovalRequest<GpuCommand>,
  clicker: string,
  tried: 'approved' | 'denied',
): Promise<void> {
  await deps.guardrails.audit
    .append({
      ...decisionAudit(request, clicker, 'refused'),
      parameters: { ...auditFieldsOf(request.command).parameters, tried },
    })
    .catch((err: unknown) => deps.log.warn({ err }, 'could not append to the audit trail'));
}

/**
 * Puts the decision's audit entry, stored with the decision in one atomic step, on the audit trail;
 * if that fails it stays with the decision and the next click on the card writes it.
 */
async function publishAudit(deps: LifecycleDeps, request: ApprovalRequest<GpuCommand>): Promise<void> {
  if (!request.pendingAudit) return;
  try {
    await deps.guardrails.audit.append(request.pendingAudit);
    await deps.guardrails.approvals.auditWritten(request.id);
  } catch (err) {
    deps.log.warn({ err, approvalId: request.id }, 'could not append a decision to the audit trail');
  }
}

/**
 * Shows a decision just made. Approved: the requester's message first (once the job is queued it is
 * the job's to edit), then the job (driveApproved: the card says "Queued" only once it is). Denied or
 * expired: sealed secrets dropped, a waiting workflow step failed, the card closed.
 */
export async function applyDecision(
  deps: LifecycleDeps,
  request: ApprovalRequest<GpuCommand>,
): Promise<void> {
  deps.guardrails.onApproval?.(
    request.state === 'approved' ? 'approved' : request.state === 'denied' ? 'denied' : 'expired',
  );
  if (request.state === 'approved') {
    await tellRequester(deps, request);
    // Claimed by the decision itself (its claimedAt): the sweeper leaves it alone meanwhile.
    await driveApproved(deps, request);
  } else {
    await tellRequester(deps, request);
    await discardSealed(deps, request);
    await deps.chat
      .failWaitingStep(request)
      .catch((err: unknown) =>
        deps.log.warn({ err, approvalId: request.id }, 'could not fail a waiting step'),
      );
    await editCard(deps, request);
  }
  await publishAudit(deps, request);
}

/** A click on a request decided earlier: repairs what its decision left undone, and says how it ended. */
async function staleClick(
  deps: LifecycleDeps,
  done: ApprovalRequest<GpuCommand>,
  tried: 'approved' | 'denied',
): Promise<string> {
  const decidedAt = done.decision?.at ?? 0;
  let note = '';
  if (Date.now() - decidedAt > REPAIR_AFTER_MS) {
    await publishAudit(deps, done);
    // Only an Approve may queue an approved job: a Deny never runs anything.
    const claimed =
      tried === 'approved' &&
      done.state === 'approved' &&
      done.stage === 'queuing' &&
      (await deps.guardrails.approvals.claimEnqueue(done.id, CLAIM_MS));
    if (claimed) {
      const outcome = await driveApproved(deps, done);
      if (outcome === 'waiting')
        note = ' Its job is not stored yet: it runs once gpuops can store it on two servers.';
      if (outcome === 'lapsed') note = LAPSED_NOTE;
    } else {
      await editCard(deps, done);
      if (done.stage === 'lapsed') note = LAPSED_NOTE;
    }
  }
  const how =
    done.state === 'expired' ? 'It expired' : `Already ${done.state} by ${who(done.decision?.by ?? '?')}`;
  return `${how} ${slackDate(decidedAt)}; nothing was changed.${note}`;
}

/** Approve or deny one request for `clicker`, checked now; at most one decision ever wins. */
export async function decideApproval(deps: LifecycleDeps, input: DecisionInput): Promise<Decided> {
  const { approvals } = deps.guardrails;
  const request = await approvals.get(input.id);
  if (!request)
    return { ok: false, message: 'This request is no longer known to gpuops; nothing was changed.' };
  const refusal = await input.mayDecide(request);
  if (refusal) {
    await recordRefusal(deps, request, input.clicker, input.state);
    return { ok: false, message: refusal };
  }
  const at = Date.now();
  const result = await approvals.decide(input.id, {
    state: input.state,
    by: input.clicker,
    at,
    ...(input.reason !== undefined ? { reason: input.reason } : {}),
    audit: decisionAudit(request, input.clicker, input.state, at),
    runBy: at + (deps.runWithinMs ?? DEFAULT_RUN_WITHIN_MS),
  });
  switch (result.outcome) {
    case 'decided':
      await applyDecision(deps, result.request);
      return { ok: true };
    case 'already-decided':
      return { ok: false, message: await staleClick(deps, result.request, input.state) };
    case 'expired': {
      const closed = await approvals.decide(input.id, {
        state: 'expired',
        by: SYSTEM_ACTOR,
        at,
        audit: decisionAudit(request, SYSTEM_ACTOR, 'expired', at),
      });
      if (closed.outcome === 'decided') await applyDecision(deps, closed.request);
      return {
        ok: false,
        message: `This request expired ${slackDate(request.expiresAt)}, before your click; nothing was done. The requester can ask again.`,
      };
    }
    default:
      return { ok: false, message: 'This request is no longer known to gpuops; nothing was changed.' };
  }
}
