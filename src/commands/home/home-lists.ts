import type { KnownBlock } from '@slack/types';
import { formatCost } from '../../pricing/cost.js';
import { clip, escapeText } from '../../render/job-message.js';
import type { ApprovalRequest } from '../../store/approval-record.js';
import type { WaitlistEntry } from '../../store/waitlist.js';
import { decisionButtons, slackDate, who } from '../approvals/render.js';
import { describeCommand, type GpuCommand } from '../registry.js';
import { waitlistLine } from '../waitlist/render.js';
import { homeActionId, homeButtonValue } from './home-buttons.js';
import type { HomeSchedule } from './home-data.js';

// The Home tab's lists: approvals waiting for this person (with the approval cards' own Approve and
// Deny), their waitlist entries and their schedules (each with Remove). Each list shows at most
// LIST_SHOWN and counts the rest, so the view stays within Slack's 100 blocks.

export const APPROVALS_SHOWN = 8;
export const LIST_SHOWN = 8;

const heading = (text: string): KnownBlock => ({ type: 'section', text: { type: 'mrkdwn', text } });
const more = (n: number, how: string): KnownBlock => ({
  type: 'context',
  elements: [{ type: 'mrkdwn', text: `…and ${n} more: ${how}.` }],
});

export function approvalsSection(requests: readonly ApprovalRequest<GpuCommand>[]): KnownBlock[] {
  if (requests.length === 0) return [heading('*Waiting for your approval*\nNothing right now.')];
  const blocks: KnownBlock[] = [heading(`*Waiting for your approval* · ${requests.length}, oldest first`)];
  for (const r of requests.slice(0, APPROVALS_SHOWN)) {
    const cost = r.cost ? (r.cost.known ? formatCost(r.cost) : 'price unknown') : 'no cost';
    const line =
      `\`${escapeText(describeCommand(r.command))}\` · ${who(r.requester)} in <#${r.ctx.channelId}>` +
      ` · ${escapeText(cost)} · expires ${slackDate(r.expiresAt)}` +
      (r.reasons[0] ? `\n_${escapeText(r.reasons[0])}_` : '');
    blocks.push(heading(clip(line)));
    blocks.push(decisionButtons(r));
  }
  if (requests.length > APPROVALS_SHOWN) {
    blocks.push(more(requests.length - APPROVALS_SHOWN, 'see them all with `/gpu approvals`'));
  }
  return blocks;
}

function removable(text: string, run: 'waitlist-rm' | 'schedule-rm', command: string, channel: string) {
  return {
    type: 'section' as const,
    text: { type: 'mrkdwn' as const, text: clip(text) },
    accessory: {
      type: 'button' as const,
      action_id: homeActionId(run),
      text: { type: 'plain_text' as const, text: 'Remove' },
      value: homeButtonValue({ t: command, c: channel }),
    },
  };
}

export function waitlistSection(entries: readonly WaitlistEntry[]): KnownBlock[] {
  if (entries.length === 0) {
    return [heading('*Your capacity waitlist*\nNothing. Add a type with `/gpu waitlist <type> [<count>]`.')];
  }
  const blocks: KnownBlock[] = [heading(`*Your capacity waitlist* · ${entries.length}`)];
  for (const e of entries.slice(0, LIST_SHOWN)) {
    blocks.push(
      removable(
        `${waitlistLine(e)} · in <#${e.channelId}>`,
        'waitlist-rm',
        `waitlist rm ${e.id}`,
        e.channelId,
      ),
    );
  }
  if (entries.length > LIST_SHOWN) {
    blocks.push(more(entries.length - LIST_SHOWN, 'see each channel’s with `/gpu waitlist`'));
  }
  return blocks;
}

export function schedulesSection(schedules: readonly HomeSchedule[]): KnownBlock[] {
  if (schedules.length === 0) return [heading('*Your schedules*\nNo scheduled starts or stops.')];
  const blocks: KnownBlock[] = [heading(`*Your schedules* · ${schedules.length}`)];
  for (const s of schedules.slice(0, LIST_SHOWN)) {
    const line = `\`${escapeText(s.id)}\` · ${s.action} *${escapeText(s.target)}* · ${escapeText(s.when)} · in <#${s.channel}>`;
    blocks.push(removable(line, 'schedule-rm', `schedule rm ${s.id}`, s.channel));
  }
  if (schedules.length > LIST_SHOWN) {
    blocks.push(more(schedules.length - LIST_SHOWN, 'see them all with `/gpu schedules`'));
  }
  return blocks;
}
