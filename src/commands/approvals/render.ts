import type { KnownBlock } from '@slack/types';
import { type CostEstimate, formatCost } from '../../pricing/cost.js';
import { clip, escapeText } from '../../render/job-message.js';
import { slackDate } from '../../render/slack-date.js';
import type { ApprovalRequest } from '../../store/approvals.js';
import { describeCommand, type GpuCommand } from '../registry.js';

// What approvals look like in Slack: the card approvers act on (Approve / Deny: labels other
// tools click by name, so they never change), the requester's message that says where the request went, the same two after a
// decision, the Deny reason modal, `/gpu approvals`, `/gpu audit` lines and the lease reminder.

export const APPROVE_ACTION = 'gpuops.approval.approve';
export const DENY_ACTION = 'gpuops.approval.deny';
/** The Deny modal, whose one field is the reason. */
export const DENY_CALLBACK = 'gpuops.approval.deny-reason';
export const DENY_REASON_BLOCK = 'reason';
export const DENY_REASON_ACTION = 'value';
export const DENY_REASON_MAX = 500;
export const EXTEND_ACTION = 'gpuops.lease.extend';

export type Message = { text: string; blocks: KnownBlock[] };

export { plainDate, slackDate } from '../../render/slack-date.js';

/** A mention for a Slack id, or the name of the bot itself for what it did on its own. */
export function who(id: string): string {
  return /^[UW][A-Z0-9]+$/.test(id) ? `<@${id}>` : escapeText(id);
}

/** `8h`, `1h 30m`, `45m`, `1d 2h`: a duration as people say it. */
export function humanDuration(seconds: number): string {
  const d = Math.floor(seconds / 86_400);
  const h = Math.floor((seconds % 86_400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const parts = [d ? `${d}d` : '', h ? `${h}h` : '', m ? `${m}m` : ''].filter(Boolean);
  return parts.length > 0 ? parts.join(' ') : `${Math.max(0, Math.round(seconds))}s`;
}

/** The cost lines of a card: per hour and per day, how it was reached, or why it is unknown. */
export function costText(cost: CostEstimate | undefined): string {
  if (!cost) return 'no machines are started by this';
  if (!cost.known) return `:warning: ${escapeText(formatCost(cost))}`;
  const basis = typeof cost.basis === 'string' ? `\n_${escapeText(cost.basis)}_` : '';
  return `${formatCost(cost)}${basis}`;
}

function provisioningText(cost: CostEstimate | undefined): string | undefined {
  if (!cost?.known) return undefined;
  const minutes = cost.provisioningMinutes;
  const regions = cost.regions && cost.regions.length > 0 ? ` · ${cost.regions.join(', ')}` : '';
  if (minutes === undefined) return regions ? regions.slice(3) : undefined;
  return `about ${minutes} min${escapeText(regions)}`;
}

function field(label: string, value: string) {
  return { type: 'mrkdwn' as const, text: clip(`*${label}*\n${value}`, 1900) };
}

/** The details every version of the card shows: what, where, who, cost, capacity, provisioning. */
function detailBlocks(request: ApprovalRequest<GpuCommand>): KnownBlock[] {
  const what = describeCommand(request.command);
  const fields = [
    field('What', `\`${escapeText(what)}\``),
    field(
      'Where',
      request.display?.project
        ? escapeText(request.display.project)
        : request.ctx.projectId
          ? `project \`${request.ctx.projectId}\``
          : 'the default project',
    ),
    field('Asked by', `${who(request.requester)} in <#${request.ctx.channelId}>`),
    field('Cost', costText(request.cost)),
  ];
  const capacity = request.display?.capacity;
  if (capacity) {
    const at = request.display?.capacityAt;
    fields.push(
      field('Capacity', `${escapeText(capacity)}${at !== undefined ? ` (at ${slackDate(at)})` : ''}`),
    );
  }
  const provisioning = provisioningText(request.cost);
  if (provisioning) fields.push(field('Provisioning', provisioning));
  if (request.lease) {
    fields.push(
      field(
        'Lease',
        `stops ${humanDuration(request.lease.seconds)} after it is running; the owner is reminded ${humanDuration(request.lease.remindBeforeSeconds)} before, with an Extend button`,
      ),
    );
  }
  const why = request.reasons.map((r) => `• ${escapeText(r)}`).join('\n');
  return [
    { type: 'section', fields },
    ...(why
      ? [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text: clip(`*Why*\n${why}`) } }]
      : []),
  ];
}

function contextBlock(request: ApprovalRequest<GpuCommand>, extra: readonly string[] = []): KnownBlock {
  const approvers = request.display?.approvers ? `approvers: ${request.display.approvers}` : '';
  const parts = [...extra, approvers, `request ${request.id}`].filter(Boolean);
  return { type: 'context', elements: [{ type: 'mrkdwn', text: clip(parts.join(' · '), 2900) }] };
}

/** The reason src/policy/decide.ts gives a request that waits because of its price. */
const ABOVE_THRESHOLD = /^It costs about .* that needs no approval\.$/;

/** On a request that waits because of what it costs, Approve asks "this costs …, approve?" first. */
function costConfirm(request: Partial<Pick<ApprovalRequest<GpuCommand>, 'cost' | 'reasons'>>) {
  const cost = request.cost;
  if (!cost?.known || !request.reasons?.some((r) => ABOVE_THRESHOLD.test(r))) return {};
  return {
    confirm: {
      title: { type: 'plain_text' as const, text: 'Approve this cost?' },
      text: {
        type: 'mrkdwn' as const,
        text: clip(
          `This runs machines costing about *${escapeText(formatCost(cost))}*, above the amount that needs no approval.`,
          300,
        ),
      },
      confirm: { type: 'plain_text' as const, text: 'Approve' },
      deny: { type: 'plain_text' as const, text: 'Cancel' },
      style: 'primary' as const,
    },
  };
}

/** The Approve and Deny buttons of one request. */
export function decisionButtons(
  request: Pick<ApprovalRequest<GpuCommand>, 'id'> &
    Partial<Pick<ApprovalRequest<GpuCommand>, 'cost' | 'reasons'>>,
  blockId?: string,
): KnownBlock {
  return {
    type: 'actions',
    ...(blockId ? { block_id: blockId } : {}),
    elements: [
      {
        type: 'button',
        action_id: APPROVE_ACTION,
        text: { type: 'plain_text', text: 'Approve' },
        style: 'primary',
        value: request.id,
        ...costConfirm(request),
      },
      {
        type: 'button',
        action_id: DENY_ACTION,
        text: { type: 'plain_text', text: 'Deny' },
        style: 'danger',
        value: request.id,
      },
    ],
  };
}

function costShort(cost: CostEstimate | undefined): string {
  if (!cost) return '';
  return cost.known ? ` (${formatCost(cost)})` : ' (price unknown)';
}

/** The card posted to the approvals channel, with Approve and Deny. */
export function approvalCard(request: ApprovalRequest<GpuCommand>): Message {
  const what = describeCommand(request.command);
  const head = `:raised_hand: *Approval needed* · \`${escapeText(what)}\` asked by ${who(request.requester)}`;
  return {
    text: `Approval needed: ${what}${costShort(request.cost)}, asked by ${who(request.requester)}`,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: clip(head) } },
      ...detailBlocks(request),
      decisionButtons(request, 'decision'),
      contextBlock(request, [`expires ${slackDate(request.expiresAt)}`]),
    ],
  };
}

/** One line on how a closed request ended: who decided, when, why. */
export function decisionLine(request: ApprovalRequest<GpuCommand>): string {
  const d = request.decision;
  const when = d ? slackDate(d.at) : '';
  switch (request.state) {
    case 'approved':
      return `:white_check_mark: *Approved* by ${who(d?.by ?? '?')} ${when}`;
    case 'denied': {
      const reason = d?.reason ? `: “${escapeText(d.reason)}”` : '';
      return `:no_entry: *Denied* by ${who(d?.by ?? '?')} ${when}${reason}`;
    }
    case 'expired':
      return `:hourglass: *Expired* ${when}: nobody decided within ${humanDuration(Math.round((request.expiresAt - request.createdAt) / 1000))}.`;
    default:
      return `:hourglass_flowing_sand: *Waiting* for an approver until ${slackDate(request.expiresAt)}`;
  }
}

const STATE_WORD = {
  approved: 'Approved',
  denied: 'Denied',
  expired: 'Expired',
  pending: 'Waiting',
} as const;

/** The card once decided or expired: the same details, the decision in place of the buttons. */
export function closedCard(request: ApprovalRequest<GpuCommand>): Message {
  const what = describeCommand(request.command);
  const d = request.decision;
  const by = d && request.state !== 'expired' ? ` by ${who(d.by)}` : '';
  const reason = request.state === 'denied' && d?.reason ? `: ${d.reason}` : '';
  return {
    text: clip(`${STATE_WORD[request.state]}${by}: ${what}${reason}`, 3000),
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: clip(decisionLine(request)) } },
      ...detailBlocks(request),
      contextBlock(request),
    ],
  };
}

/** The requester's message while the request waits: where it went and why. */
export function waitingMessage(request: ApprovalRequest<GpuCommand>): Message {
  const what = describeCommand(request.command);
  const where = `<#${request.approvalChannel}>`;
  const why = request.reasons.map((r) => `• ${escapeText(r)}`).join('\n');
  return {
    text: `Waiting for approval in ${where}: ${what}`,
    blocks: [
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: clip(`:hourglass: *Waiting for approval* in ${where} · \`${escapeText(what)}\`\n${why}`),
        },
      },
      {
        type: 'context',
        elements: [
          {
            type: 'mrkdwn',
            text: `requested by ${who(request.requester)} · expires ${slackDate(request.expiresAt)} · request ${request.id}`,
          },
        ],
      },
    ],
  };
}

/** The requester's message after the decision (an approved one then shows its job's progress). */
export function decidedMessage(request: ApprovalRequest<GpuCommand>): Message {
  const what = describeCommand(request.command);
  const d = request.decision;
  const tail =
    request.state === 'approved'
      ? ' Queued: it starts in a moment.'
      : request.state === 'denied'
        ? ' Nothing was done.'
        : ' Nothing was done; ask again if it is still needed.';
  const by = d && request.state !== 'expired' ? ` by ${who(d.by)}` : '';
  const reason = request.state === 'denied' && d?.reason ? ` — ${d.reason}` : '';
  return {
    text: clip(`${STATE_WORD[request.state]}${by}: ${what}${reason}`, 3000),
    blocks: [
      {
        type: 'section',
        text: { type: 'mrkdwn', text: clip(`${decisionLine(request)}\n\`${escapeText(what)}\`.${tail}`) },
      },
      {
        type: 'context',
        elements: [
          { type: 'mrkdwn', text: `requested by ${who(request.requester)} · request ${request.id}` },
        ],
      },
    ],
  };
}

/** The modal Deny opens: one required reason. */
export function denyReasonModal(request: ApprovalRequest<GpuCommand>, metadata: string) {
  return {
    type: 'modal' as const,
    callback_id: DENY_CALLBACK,
    private_metadata: metadata,
    title: { type: 'plain_text' as const, text: 'Deny request' },
    submit: { type: 'plain_text' as const, text: 'Deny' },
    close: { type: 'plain_text' as const, text: 'Cancel' },
    blocks: [
      {
        type: 'section' as const,
        text: {
          type: 'mrkdwn' as const,
          text: clip(
            `Deny \`${escapeText(describeCommand(request.command))}\` asked by ${who(request.requester)}? They will see your reason.`,
          ),
        },
      },
      {
        type: 'input' as const,
        block_id: DENY_REASON_BLOCK,
        label: { type: 'plain_text' as const, text: 'Reason' },
        element: {
          type: 'plain_text_input' as const,
          action_id: DENY_REASON_ACTION,
          multiline: true,
          min_length: 1,
          max_length: DENY_REASON_MAX,
          placeholder: { type: 'plain_text' as const, text: 'Why not, and what to do instead' },
        },
      },
    ],
  };
}

const LIST_MAX = 15;
/** The requester's own waiting requests listed by name; the rest are counted. */
const OWN_MAX = 10;

/** `/gpu approvals`: the requests this person may decide, each with its buttons. */
export function pendingList(
  requests: readonly ApprovalRequest<GpuCommand>[],
  options: { readonly own?: readonly ApprovalRequest<GpuCommand>[] } = {},
): Message {
  const mine = options.own ?? [];
  // The requester's own waiting requests, each named, with where it waits and until when.
  const ownShown = mine
    .slice(0, OWN_MAX)
    .map(
      (r) =>
        `• \`${escapeText(describeCommand(r.command))}\` · waits in <#${r.approvalChannel}> · expires ${slackDate(r.expiresAt)}`,
    );
  const ownMore = mine.length > ownShown.length ? `\n…and ${mine.length - ownShown.length} more.` : '';
  const own =
    mine.length > 0
      ? `\n*${mine.length} request(s) of yours wait for someone else:*\n${ownShown.join('\n')}${ownMore}`
      : '';
  if (requests.length === 0) {
    const text = clip(`Nothing waits for your approval.${own}`);
    return { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }] };
  }
  const shown = requests.slice(0, LIST_MAX);
  const more =
    requests.length > shown.length ? ` (the oldest ${shown.length} shown; decide those first)` : '';
  const blocks: KnownBlock[] = [
    {
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: clip(`*${requests.length} request(s) wait for your approval*${more}${own}`),
      },
    },
  ];
  for (const r of shown) {
    const line =
      `\`${escapeText(describeCommand(r.command))}\` · ${who(r.requester)} in <#${r.ctx.channelId}>` +
      ` · ${r.cost ? (r.cost.known ? formatCost(r.cost) : 'price unknown') : 'no cost'}` +
      ` · expires ${slackDate(r.expiresAt)}` +
      (r.reasons[0] ? `\n_${escapeText(r.reasons[0])}_` : '');
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: clip(line) } });
    blocks.push(decisionButtons(r, `decide-${r.id}`.slice(0, 255)));
  }
  return { text: `${requests.length} request(s) wait for your approval`, blocks };
}
