import type { KnownBlock } from '@slack/types';
import { clip, escapeText } from '../../render/job-message.js';
import type { Schedule, ScheduleTarget } from '../../store/schedules.js';
import { formatInZone } from './parse-when.js';

// Schedules as people read them: one line each, the next run in the viewer's own time zone (the
// schedule's own zone says when it was meant). Pure builders.

export function scheduleTargetText(target: ScheduleTarget): string {
  return 'tag' in target ? `instances tagged ${target.tag.key}=${target.tag.value}` : target.name;
}

/** `stop train-01 weekdays 20:00 (Europe/London)`. */
export function scheduleSummary(s: Pick<Schedule, 'action' | 'target' | 'when' | 'tz'>): string {
  return `${s.action} ${scheduleTargetText(s.target)} ${s.when} (${s.tz})`;
}

export function scheduleLine(
  s: Schedule,
  next: number | undefined,
  viewerTz: string,
  viewerTzKnown = true,
): string {
  const when = s.paused
    ? `:double_vertical_bar: paused: ${escapeText(s.paused.reason)}`
    : next === undefined
      ? ':warning: no next run: its timer is gone; remove it and make it again'
      : `next ${formatInZone(next, viewerTz)} ${viewerTzKnown ? 'your time' : 'UTC'}`;
  const last = s.lastRun ? ` · last: ${escapeText(s.lastRun.outcome)}` : '';
  return `• \`${s.id}\` · *${s.action}* ${escapeText(scheduleTargetText(s.target))} · ${escapeText(s.when)} ${escapeText(s.tz)} · ${when} · by <@${s.ownerId}>${last}`;
}

export function scheduleListBlocks(
  schedules: readonly Schedule[],
  nexts: readonly (number | undefined)[],
  viewerTz: string,
  /** False when Slack did not say the viewer's zone and `viewerTz` is UTC in its place. */
  viewerTzKnown = true,
): { text: string; blocks: KnownBlock[] } {
  if (schedules.length === 0) {
    const text =
      'This channel has no power schedules. Make one with `/gpu schedule stop <instance|tag> <when>`, such as `/gpu schedule stop train-01 weekdays 20:00`.';
    return { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }] };
  }
  const lines = schedules.map((s, i) => scheduleLine(s, nexts[i], viewerTz, viewerTzKnown));
  return {
    text: `Power schedules of this channel: ${schedules.length}`,
    blocks: [
      {
        type: 'section',
        text: { type: 'mrkdwn', text: clip(`*Power schedules of this channel*\n${lines.join('\n')}`) },
      },
      {
        type: 'context',
        elements: [
          {
            type: 'mrkdwn',
            text: `${viewerTzKnown ? `Times in your time zone (${escapeText(viewerTz)})` : 'Times in UTC (Slack did not say your time zone)'}. Remove one with \`/gpu schedule rm <id>\`.`,
          },
        ],
      },
    ],
  };
}
