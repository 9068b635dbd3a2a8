import type { App } from '@slack/bolt';
import { leaseExtended } from '../../commands/approvals/lease-messages.js';
import { EXTEND_ACTION, humanDuration, slackDate, who } from '../../commands/approvals/render.js';
import { scheduleLease } from '../../jobs/guardrail-jobs.js';
import { groupsInPolicy, mayApprove } from '../../policy/decide.js';
import type { Guardrails } from '../../policy/guardrails.js';
import { DEFAULT_LEASE_MAX_TOTAL_SECONDS } from '../../policy/policy-schema.js';
import { takeRateLimit } from '../../requests/take-rate-limit.js';
import type { AuditInput } from '../../store/audit.js';
import type { Lease } from '../../store/leases.js';
import { groupsOf } from '../group-membership.js';
import type { SlackDeps } from '../slack-deps.js';
import { type Click, clickChannel, record, tell } from './approval-actions.js';

// The Extend button of a lease reminder: the owner, or anyone who may approve, moves the stop time.
// The owner's own Extends stop at the policy's lease.max_total from the start; past it, only someone
// who may approve (not the owner) extends, as they would approve a new costly machine.

export function registerLeaseActions(app: App, deps: SlackDeps): void {
  app.action<Click>(EXTEND_ACTION, async ({ ack, body, action }) => {
    await ack();
    const guardrails = deps.guardrails;
    const [id, stopAtText] = String(action.value ?? '').split('|');
    if (!id || !stopAtText) return;
    const channel = clickChannel(body);
    const clicker = body.user.id;
    try {
      await extendLease(deps, guardrails, { id, stopAt: Number(stopAtText), clicker, channel, body });
    } catch (err) {
      deps.log.warn({ err }, 'could not extend a lease');
      await tell(
        deps,
        channel,
        clicker,
        'gpuops could not extend the lease right now; try again in a minute.',
      );
    }
  });
}

async function extendLease(
  deps: SlackDeps,
  guardrails: Guardrails,
  input: { id: string; stopAt: number; clicker: string; channel: string | undefined; body: Click },
): Promise<void> {
  const { id, stopAt, clicker, channel } = input;
  // A press counts against the rate limits as a typed command does.
  const limited = await takeRateLimit(deps, { userId: clicker, channelId: channel ?? clicker });
  if (limited) return tell(deps, channel, clicker, limited.message);
  const lease = await guardrails.leases.get(id);
  if (!lease) return tell(deps, channel, clicker, 'This lease is no longer known to gpuops.');
  if (clicker !== lease.owner) {
    const approverGroups = await groupsOf(deps, clicker, groupsInPolicy(guardrails.policy));
    const check = mayApprove({
      policy: guardrails.policy,
      approverId: clicker,
      approverGroups,
      requesterId: lease.owner,
      kind: 'create',
      // Where the Extend was clicked (the reminder's channel, from Slack's payload), never the lease's.
      ...(channel !== undefined ? { clickedIn: channel } : {}),
    });
    if (!check.allowed) {
      await record(deps, guardrails, refusal(lease, input, 'not the owner or an approver'));
      return tell(
        deps,
        channel,
        clicker,
        `Only ${who(lease.owner)} or an approver may extend this lease; nothing was changed.`,
      );
    }
  }
  const maxTotalSeconds =
    guardrails.policy.approvals.lease?.maxTotalSeconds ?? DEFAULT_LEASE_MAX_TOTAL_SECONDS;
  const upTo = clicker === lease.owner ? lease.startedAt + maxTotalSeconds * 1000 : undefined;
  const result = await guardrails.leases.extend(id, stopAt, upTo !== undefined ? { upTo } : {});
  switch (result.outcome) {
    case 'extended': {
      if (!deps.queue) return;
      await scheduleLease(deps.queue, result.lease);
      const ts = input.body.message?.ts;
      if (channel && ts) {
        await deps.client.chat
          .update({ channel, ts, ...leaseExtended(result.lease, clicker) })
          .catch((err: unknown) => deps.log.warn({ err }, 'could not edit a lease reminder'));
      }
      await record(deps, guardrails, {
        event: 'request',
        actor: clicker,
        operation: 'lease.extend',
        target: lease.instance,
        ...(lease.projectId ? { project: lease.projectId } : {}),
        parameters: { lease: id, stopAt: result.lease.stopAt, owner: lease.owner },
        outcome: 'extended',
        jobId: id,
      });
      return;
    }
    case 'stale':
      return tell(
        deps,
        channel,
        clicker,
        `Already extended: \`${lease.instance}\` now stops at ${slackDate(result.lease.stopAt)}.`,
      );
    case 'at-limit':
      await record(deps, guardrails, refusal(lease, input, 'lease.max_total'));
      return tell(
        deps,
        channel,
        clicker,
        `Not extended: \`${lease.instance}\` already runs as long as the policy lets its owner keep it (${humanDuration(maxTotalSeconds)} from its start, lease.max_total) and stops at ${slackDate(result.lease.stopAt)}. An approver can extend it further.`,
      );
    case 'ended':
      return tell(
        deps,
        channel,
        clicker,
        `Too late: the lease of \`${lease.instance}\` ended and it is being stopped.`,
      );
    default:
      return tell(deps, channel, clicker, 'This lease is no longer known to gpuops.');
  }
}

/** The audit entry of an Extend the policy refused: who pressed, on whose lease, and why. */
function refusal(
  lease: Lease,
  press: { readonly clicker: string; readonly stopAt: number; readonly channel: string | undefined },
  why: string,
): AuditInput {
  const { clicker, stopAt, channel } = press;
  return {
    event: 'request',
    actor: clicker,
    operation: 'lease.extend',
    target: lease.instance,
    ...(lease.projectId ? { project: lease.projectId } : {}),
    parameters: { lease: lease.id, stopAt, owner: lease.owner, why },
    outcome: 'refused',
    ...(channel ? { channel } : {}),
  };
}
