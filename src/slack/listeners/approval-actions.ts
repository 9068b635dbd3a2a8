import type { App, BlockAction, ButtonAction, ViewSubmitAction } from '@slack/bolt';
import {
  APPROVE_ACTION,
  DENY_ACTION,
  DENY_CALLBACK,
  DENY_REASON_ACTION,
  DENY_REASON_BLOCK,
  DENY_REASON_MAX,
  denyReasonModal,
} from '../../commands/approvals/render.js';
import type { GpuCommand } from '../../commands/registry.js';
import { groupsInPolicy, mayApprove } from '../../policy/decide.js';
import type { Guardrails } from '../../policy/guardrails.js';
import { type Decided, decideApproval, recordRefusal } from '../../requests/decide-approval.js';
import type { LifecycleDeps } from '../../requests/drive-approved.js';
import type { ApprovalRequest } from '../../store/approvals.js';
import type { AuditInput } from '../../store/audit.js';
import { slackDecisionPorts } from '../decision-ports.js';
import { groupsOf } from '../group-membership.js';
import type { SlackDeps } from '../slack-deps.js';
import { answerOnHome, fromHome } from './home-actions.js';

// The buttons of approval cards (lease reminders: lease-actions.ts). Every click is checked here, on the server, at
// click time: the clicker must be allowed by the policy (decide.ts mayApprove: an approver, and not
// the requester unless self-approval is allowed); anyone else gets an ephemeral refusal and nothing
// changes. The decision, its job and their repair belong to the request's lifecycle
// (requests/decide-approval.ts, requests/drive-approved.ts): this file only translates Slack payloads.

export type Click = BlockAction<ButtonAction>;

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

/** Whether `clicker`, clicking in `clickedIn` (Slack's payload; none on Home), may decide `request`. */
async function mayDecide(
  deps: SlackDeps,
  guardrails: Guardrails,
  request: ApprovalRequest<GpuCommand>,
  clicker: string,
  clickedIn: string | undefined,
): Promise<string | undefined> {
  const { policy } = guardrails;
  const approverGroups = await groupsOf(deps, clicker, groupsInPolicy(policy));
  const check = mayApprove({
    policy,
    approverId: clicker,
    approverGroups,
    requesterId: request.requester,
    kind: request.kind,
    owners: request.display?.owners,
    ...(clickedIn !== undefined ? { clickedIn } : {}),
  });
  return check.allowed ? undefined : `${check.message} Nothing was changed.`;
}

/** The lifecycle's view of the listener's deps (requests/decide-approval.ts). */
function lifecycleOf(deps: SlackDeps): LifecycleDeps {
  return { ...deps, chat: slackDecisionPorts(deps) };
}

/** Approve or deny one request for `clicker`, as the policy allows them now (requests/decide-approval.ts). */
function decideRequest(
  deps: SlackDeps,
  guardrails: Guardrails,
  input: {
    readonly id: string;
    readonly clicker: string;
    readonly clickedIn: string | undefined;
    readonly state: 'approved' | 'denied';
    readonly reason?: string;
  },
): Promise<Decided> {
  return decideApproval(lifecycleOf(deps), {
    ...input,
    mayDecide: (request) => mayDecide(deps, guardrails, request, input.clicker, input.clickedIn),
  });
}

export function registerApprovalActions(app: App, deps: SlackDeps): void {
  app.action<Click>(APPROVE_ACTION, async ({ ack, body, action }) => {
    await ack();
    const guardrails = deps.guardrails;
    if (!action.value) return;
    const result = await decideRequest(deps, guardrails, {
      id: action.value,
      clicker: body.user.id,
      clickedIn: fromHome(body) ? undefined : clickChannel(body),
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
      const refusal = await mayDecide(deps, guardrails, request, clicker, home ? undefined : channel);
      if (refusal) {
        await recordRefusal(lifecycleOf(deps), request, clicker, 'denied');
        return await say(refusal);
      }
      if (request.state !== 'pending' || request.expiresAt <= Date.now()) {
        // Deciding with no reason needed tells them what happened (and closes an expired one).
        const result = await decideRequest(deps, guardrails, {
          id: request.id,
          clicker,
          clickedIn: home ? undefined : channel,
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
      const channel = typeof meta.channel === 'string' && meta.channel ? meta.channel : undefined;
      const result = await decideRequest(deps, guardrails, {
        id: meta.id,
        clicker: body.user.id,
        clickedIn: meta.home === true ? undefined : channel, // the Deny click's, from its payload
        state: 'denied',
        reason: reason.slice(0, DENY_REASON_MAX),
      }).catch((err: unknown): Decided => {
        deps.log.error({ err }, 'could not deny a request');
        return {
          ok: false,
          message: 'gpuops cannot reach its store right now; nothing was changed. Try again in a minute.',
        };
      });
      if (meta.home === true)
        await answerOnHome(deps, body.user.id, result.ok ? ':no_entry: Denied.' : result.message);
      else if (!result.ok) await tell(deps, channel, body.user.id, result.message);
    },
  );
}
