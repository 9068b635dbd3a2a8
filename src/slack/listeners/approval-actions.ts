import type { App, BlockAction, ButtonAction, ViewSubmitAction } from '@slack/bolt';
import {
  APPROVE_ACTION,
  closedCard,
  DENY_ACTION,
  DENY_CALLBACK,
  DENY_REASON_ACTION,
  DENY_REASON_BLOCK,
  DENY_REASON_MAX,
  decidedMessage,
  denyReasonModal,
  slackDate,
  who,
} from '../../commands/approvals/render.js';
import { failWaitingStep } from '../../commands/kit/finish-step.js';
import { requesterTarget } from '../../commands/kit/reply-port.js';
import type { GpuCommand } from '../../commands/registry.js';
import type { JobContext } from '../../jobs/job-data.js';
import { JOB_IDS_KEPT_MS } from '../../jobs/queue.js';
import { groupsInPolicy, mayApprove } from '../../policy/decide.js';
import type { Guardrails } from '../../policy/guardrails.js';
import { formatCost } from '../../pricing/cost.js';
import { enqueueRequest } from '../../requests/enqueue-request.js';
import { type ApprovalRequest, SYSTEM_ACTOR } from '../../store/approvals.js';
import { type AuditInput, auditFieldsOf } from '../../store/audit.js';
import { groupsOf } from '../group-membership.js';
import { createReplyPort } from '../reply-port.js';
import type { SlackDeps } from '../slack-deps.js';
import { answerOnHome, fromHome } from './home-actions.js';

// The buttons of approval cards (lease reminders: lease-actions.ts). Every click is checked here, on the server, at
// click time: the clicker must be allowed by the policy (decide.ts mayApprove: an approver, and not
// the requester unless self-approval is allowed); anyone else gets an ephemeral refusal and nothing
// changes. A request is decided in one atomic Redis step (store/approvals.ts), so however many people
// click at once, one decision wins and one job is queued, with the approval id as its job id.

export type Click = BlockAction<ButtonAction>;

/** A response_url lives 30 minutes: an answer after that goes by chat.postEphemeral instead. */
const RESPONSE_URL_LIFETIME_MS = 25 * 60_000;
/** A card still showing buttons this long after its decision missed its edit: the next click repairs it. */
const REPAIR_AFTER_MS = 10_000;

export function clickChannel(body: Click): string | undefined {
  return body.channel?.id ?? (body.container as { channel_id?: string } | undefined)?.channel_id;
}

/** An ephemeral answer to the person who clicked, where they clicked. */
export async function tell(
  deps: SlackDeps,
  channel: string | undefined,
  user: string,
  text: string,
): Promise<void> {
  if (!channel) return;
  await deps.client.chat
    .postEphemeral({ channel, user, text })
    .catch((err: unknown) => deps.log.warn({ err }, 'could not answer a click'));
}

export async function record(deps: SlackDeps, guardrails: Guardrails, input: AuditInput): Promise<void> {
  await guardrails.audit
    .append(input)
    .catch((err: unknown) => deps.log.warn({ err }, 'could not append to the audit trail'));
}

function decisionAudit(
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

/**
 * Puts the decision's audit entry, stored with the decision in one atomic step, on the audit trail;
 * if that fails it stays with the decision and the next click on the card writes it.
 */
async function publishAudit(
  deps: SlackDeps,
  guardrails: Guardrails,
  request: ApprovalRequest<GpuCommand>,
): Promise<void> {
  if (!request.pendingAudit) return;
  try {
    await guardrails.audit.append(request.pendingAudit);
    await guardrails.approvals.auditWritten(request.id);
  } catch (err) {
    deps.log.warn({ err, approvalId: request.id }, 'could not append a decision to the audit trail');
  }
}

/** Whether `clicker` may decide `request`; the refusal in words otherwise. */
async function mayDecide(
  deps: SlackDeps,
  guardrails: Guardrails,
  request: ApprovalRequest<GpuCommand>,
  clicker: string,
): Promise<string | undefined> {
  const { policy } = guardrails;
  const approverGroups = await groupsOf(deps, clicker, groupsInPolicy(policy));
  const check = mayApprove({
    policy,
    approverId: clicker,
    approverGroups,
    requesterId: request.requester,
    kind: request.kind,
    channelId: request.approvalChannel,
  });
  return check.allowed ? undefined : `${check.message} Nothing was changed.`;
}

async function editCard(deps: SlackDeps, request: ApprovalRequest<GpuCommand>): Promise<void> {
  if (!request.card) return;
  await deps.client.chat
    .update({ channel: request.card.channel, ts: request.card.ts, ...closedCard(request) })
    .catch((err: unknown) =>
      deps.log.warn({ err, approvalId: request.id }, 'could not edit an approval card'),
    );
}

async function tellRequester(deps: SlackDeps, request: ApprovalRequest<GpuCommand>): Promise<void> {
  // Their message, else privately: an ephemeral where they asked, else a DM where the bot cannot post.
  await createReplyPort({ client: deps.client, log: deps.log })
    .show(requesterTarget(request), decidedMessage(request), request.requesterMessage)
    .catch((err: unknown) =>
      deps.log.warn({ err, approvalId: request.id }, 'could not tell the requester the decision'),
    );
}

async function discardSealed(deps: SlackDeps, request: ApprovalRequest<GpuCommand>): Promise<void> {
  for (const ref of Object.values(request.sealed ?? {})) {
    if (ref) await deps.sealer?.discard(ref).catch(() => {});
  }
}

/**
 * The approved request as one job, its id the approval's, then `enqueuedAt` on the approval: from
 * then on the approval itself (kept 30 days past its expiry) says the job ran, however long ago the
 * job and its record were removed.
 */
async function enqueueApproved(
  deps: SlackDeps,
  guardrails: Guardrails,
  request: ApprovalRequest<GpuCommand>,
): Promise<void> {
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
  await guardrails.approvals.setEnqueued(request.id);
}

/**
 * A stale Approve on an approved request whose job never reached the queue (Redis failed right after
 * the decision). Only while BullMQ still knows every job id it was given (DEFAULT_JOB_OPTIONS): a
 * job queued whose `enqueuedAt` was then lost is found there, not run again. Older, nothing runs.
 */
async function repairEnqueue(
  deps: SlackDeps,
  guardrails: Guardrails,
  done: ApprovalRequest<GpuCommand>,
): Promise<string | undefined> {
  if (done.state !== 'approved' || done.enqueuedAt !== undefined) return undefined;
  if (await deps.queue.getJob(done.id)) {
    await guardrails.approvals.setEnqueued(done.id);
    return undefined;
  }
  if (Date.now() - (done.decision?.at ?? 0) >= JOB_IDS_KEPT_MS) {
    return ' It never reached the queue and is too old to run now: the requester can ask again.';
  }
  await enqueueApproved(deps, guardrails, done);
  return undefined;
}

/** Shows a decision just made: requester's message, the job (approved), the card, the audit trail. */
async function applyDecision(
  deps: SlackDeps,
  guardrails: Guardrails,
  request: ApprovalRequest<GpuCommand>,
): Promise<void> {
  guardrails.onApproval?.(
    request.state === 'approved' ? 'approved' : request.state === 'denied' ? 'denied' : 'expired',
  );
  // The requester's message first: once the job is queued, it is the job's to edit.
  await tellRequester(deps, request);
  if (request.state === 'approved') await enqueueApproved(deps, guardrails, request);
  else {
    await discardSealed(deps, request);
    await failWaitingStep({ slack: deps.client, log: deps.log }, request);
  }
  await editCard(deps, request);
  await publishAudit(deps, guardrails, request);
}

type Decided = { readonly ok: true } | { readonly ok: false; readonly message: string };

/** Approve or deny one request for `clicker`, checked now; at most one decision ever wins. */
async function decideRequest(
  deps: SlackDeps,
  guardrails: Guardrails,
  input: {
    readonly id: string;
    readonly clicker: string;
    readonly state: 'approved' | 'denied';
    readonly reason?: string;
  },
): Promise<Decided> {
  const { approvals } = guardrails;
  const request = await approvals.get(input.id);
  if (!request)
    return { ok: false, message: 'This request is no longer known to gpuops; nothing was changed.' };
  const refusal = await mayDecide(deps, guardrails, request, input.clicker);
  if (refusal) {
    await record(deps, guardrails, {
      ...decisionAudit(request, input.clicker, 'refused'),
      parameters: { ...auditFieldsOf(request.command).parameters, tried: input.state },
    });
    return { ok: false, message: refusal };
  }
  const at = Date.now();
  const result = await approvals.decide(input.id, {
    state: input.state,
    by: input.clicker,
    at,
    ...(input.reason !== undefined ? { reason: input.reason } : {}),
    audit: decisionAudit(request, input.clicker, input.state, at),
  });
  switch (result.outcome) {
    case 'decided':
      await applyDecision(deps, guardrails, result.request);
      return { ok: true };
    case 'already-decided': {
      const done = result.request;
      const decidedAt = done.decision?.at ?? 0;
      let note: string | undefined;
      if (Date.now() - decidedAt > REPAIR_AFTER_MS) {
        await editCard(deps, done);
        await publishAudit(deps, guardrails, done);
        // Only an Approve may queue an approved job: a Deny never runs anything.
        if (input.state === 'approved') note = await repairEnqueue(deps, guardrails, done);
      }
      const how =
        done.state === 'expired' ? 'It expired' : `Already ${done.state} by ${who(done.decision?.by ?? '?')}`;
      return { ok: false, message: `${how} ${slackDate(decidedAt)}; nothing was changed.${note ?? ''}` };
    }
    case 'expired': {
      const closed = await approvals.decide(input.id, {
        state: 'expired',
        by: SYSTEM_ACTOR,
        at,
        audit: decisionAudit(request, SYSTEM_ACTOR, 'expired', at),
      });
      if (closed.outcome === 'decided') await applyDecision(deps, guardrails, closed.request);
      return {
        ok: false,
        message: `This request expired ${slackDate(request.expiresAt)}, before your click; nothing was done. The requester can ask again.`,
      };
    }
    default:
      return { ok: false, message: 'This request is no longer known to gpuops; nothing was changed.' };
  }
}

export function registerApprovalActions(app: App, deps: SlackDeps): void {
  app.action<Click>(APPROVE_ACTION, async ({ ack, body, action }) => {
    await ack();
    const guardrails = deps.guardrails;
    if (!action.value) return;
    const result = await decideRequest(deps, guardrails, {
      id: action.value,
      clicker: body.user.id,
      state: 'approved',
    }).catch((err: unknown): Decided => {
      deps.log.error({ err }, 'could not approve a request');
      return {
        ok: false,
        message: 'gpuops cannot reach its store right now; nothing was changed. Try again in a minute.',
      };
    });
    // On the Home tab the answer is the Home itself, re-published without the decided request.
    if (fromHome(body))
      await answerOnHome(deps, body.user.id, result.ok ? ':white_check_mark: Approved.' : result.message);
    else if (!result.ok) await tell(deps, clickChannel(body), body.user.id, result.message);
  });

  app.action<Click>(DENY_ACTION, async ({ ack, body, action }) => {
    await ack();
    const guardrails = deps.guardrails;
    if (!action.value) return;
    const channel = clickChannel(body);
    const clicker = body.user.id;
    const home = fromHome(body);
    const say = (text: string) =>
      home ? answerOnHome(deps, clicker, text) : tell(deps, channel, clicker, text);
    try {
      const request = await guardrails.approvals.get(action.value);
      if (!request) return await say('This request is no longer known to gpuops.');
      // Checked before the reason is asked for, and again when it is submitted.
      const refusal = await mayDecide(deps, guardrails, request, clicker);
      if (refusal) {
        await record(deps, guardrails, {
          ...decisionAudit(request, clicker, 'refused'),
          parameters: { ...auditFieldsOf(request.command).parameters, tried: 'denied' },
        });
        return await say(refusal);
      }
      if (request.state !== 'pending' || request.expiresAt <= Date.now()) {
        // Deciding with no reason needed tells them what happened (and closes an expired one).
        const result = await decideRequest(deps, guardrails, {
          id: request.id,
          clicker,
          state: 'denied',
          reason: '',
        });
        if (!result.ok) await say(result.message);
        return;
      }
      await deps.client.views.open({
        trigger_id: body.trigger_id,
        view: denyReasonModal(
          request,
          JSON.stringify({ id: request.id, channel: channel ?? '', ...(home ? { home: true } : {}) }),
        ),
      });
    } catch (err) {
      deps.log.warn({ err }, 'could not ask for a reason to deny');
      await say('I could not open the Deny form; nothing was changed. Try again.');
    }
  });

  app.view<ViewSubmitAction>(
    { callback_id: DENY_CALLBACK, type: 'view_submission' },
    async ({ ack, body }) => {
      const guardrails = deps.guardrails;
      let meta: { id?: unknown; channel?: unknown; home?: unknown };
      try {
        meta = JSON.parse(body.view.private_metadata) as typeof meta;
      } catch {
        meta = {};
      }
      const reason = String(
        body.view.state.values[DENY_REASON_BLOCK]?.[DENY_REASON_ACTION]?.value ?? '',
      ).trim();
      if (typeof meta.id !== 'string') return ack();
      if (reason === '') {
        return ack({
          response_action: 'errors',
          errors: { [DENY_REASON_BLOCK]: 'Say why, so the requester knows what to do instead.' },
        });
      }
      await ack();
      const result = await decideRequest(deps, guardrails, {
        id: meta.id,
        clicker: body.user.id,
        state: 'denied',
        reason: reason.slice(0, DENY_REASON_MAX),
      }).catch((err: unknown): Decided => {
        deps.log.error({ err }, 'could not deny a request');
        return {
          ok: false,
          message: 'gpuops cannot reach its store right now; nothing was changed. Try again in a minute.',
        };
      });
      const channel = typeof meta.channel === 'string' && meta.channel ? meta.channel : undefined;
      if (meta.home === true)
        await answerOnHome(deps, body.user.id, result.ok ? ':no_entry: Denied.' : result.message);
      else if (!result.ok) await tell(deps, channel, body.user.id, result.message);
    },
  );
}
