import { closedCard, decidedMessage } from '../commands/approvals/render.js';
import { failWaitingStep } from '../commands/kit/finish-step.js';
import { requesterTarget } from '../commands/kit/reply-port.js';
import type { GpuCommand } from '../commands/registry.js';
import type { Guardrails } from '../policy/guardrails.js';
import { type ApprovalRequest, SYSTEM_ACTOR } from '../store/approvals.js';
import { auditFieldsOf } from '../store/audit.js';
import type { WorkerDeps } from './worker-deps.js';

// The `approvals.expire` system job (a job scheduler: once per period across replicas): closes every
// request whose time is up, in Redis first (one atomic step each, so a click at the same moment sees
// it closed), then on Slack: the card loses its buttons and says it expired, and so does the
// requester's message. Slack failing here is logged: the next click on the card repairs it.

export async function expireApprovals(deps: WorkerDeps): Promise<string> {
  const guardrails = deps.guardrails;
  const closed = await guardrails.approvals.expireDue((deps.now ?? Date.now)());
  for (const request of closed) {
    guardrails.onApproval?.('expired');
    await showExpired(deps, guardrails, request);
  }
  return `${closed.length} approval request(s) expired`;
}

async function showExpired(deps: WorkerDeps, guardrails: Guardrails, request: ApprovalRequest<GpuCommand>) {
  const { log, slack } = deps;
  const fields = auditFieldsOf(request.command);
  await guardrails.audit
    .append({
      event: 'decision',
      actor: SYSTEM_ACTOR,
      ...fields,
      ...(request.ctx.projectId ? { project: request.ctx.projectId } : {}),
      outcome: 'expired',
      approvalId: request.id,
      channel: request.approvalChannel,
      durationMs: Math.max(0, (request.decision?.at ?? Date.now()) - request.createdAt),
    })
    .catch((err: unknown) => log.warn({ err, approvalId: request.id }, 'could not audit an expiry'));
  if (request.card) {
    await slack.chat
      .update({ channel: request.card.channel, ts: request.card.ts, ...closedCard(request) })
      .catch((err: unknown) => log.warn({ err, approvalId: request.id }, 'could not close an expired card'));
  }
  // Their message, else privately: an ephemeral where they asked, else a DM where the bot cannot post.
  await deps.reply
    .show(requesterTarget(request), decidedMessage(request), request.requesterMessage)
    .catch((err: unknown) =>
      log.warn({ err, approvalId: request.id }, 'could not tell the requester their request expired'),
    );
  await failWaitingStep(deps, request);
  for (const ref of Object.values(request.sealed ?? {})) {
    if (ref) await deps.sealer?.discard(ref).catch(() => {});
  }
}
