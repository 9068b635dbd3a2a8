import type { ActionsBlock, Button, KnownBlock } from '@slack/types';
import { z } from 'zod';
import { type CostEstimate, formatUsd } from '../pricing/cost.js';
import { formatDuration } from './format-duration.js';
import { clip, escapeText } from './job-message.js';

// The idle-GPU alert: what is idle, for how long, what it costs, and three buttons — Stop (through
// the same checks and approvals as /gpu stop), Keep for 2 hours, Snooze for a day. Pure builders; the
// chart goes in the alert's thread.

export const IDLE_ACTIONS = {
  stop: 'gpuops.idle.stop',
  keep: 'gpuops.idle.keep',
  snooze: 'gpuops.idle.snooze',
} as const;
export const IDLE_ACTIONS_BLOCK = 'gpuops.idle.actions';

/** How long each answer keeps the alerts quiet. */
export const KEEP_SECONDS = 2 * 3600;
export const SNOOZE_SECONDS = 24 * 3600;

const valueSchema = z.object({
  /** Instance id. */
  i: z.string().min(1).max(64),
  /** Project id. */
  p: z.string().min(1).max(64),
  /** Instance name, for the answer. */
  n: z.string().max(128),
});
export type IdleButtonValue = z.infer<typeof valueSchema>;

export function readIdleButtonValue(value: string | undefined): IdleButtonValue | undefined {
  if (!value) return undefined;
  try {
    const parsed = valueSchema.safeParse(JSON.parse(value));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export interface IdleAlertInput {
  readonly instanceId: string;
  readonly projectId: string;
  readonly name: string;
  readonly type: string;
  /** Idle since (unix ms), as far as the metrics show. */
  readonly since: number;
  readonly now: number;
  readonly thresholdPercent: number;
  readonly maxUtil: number;
  readonly cost: CostEstimate;
  readonly ownerId?: string | undefined;
  /** When the policy stops it on its own if nobody answers (seconds after the alert). */
  readonly autoStopAfterSeconds?: number | undefined;
  /** Where the chart is: 'thread' (channel and DM alike). */
  readonly chart: boolean;
}

const button = (text: string, actionId: string, value: string, style?: 'danger' | 'primary'): Button => ({
  type: 'button',
  action_id: actionId,
  text: { type: 'plain_text', text, emoji: true },
  value,
  ...(style ? { style } : {}),
});

/** `2h30m`, `45m`, `3d4h`: whole minutes from a minute on, seconds below. */
export function idleFor(ms: number): string {
  const seconds = Math.max(1, Math.floor(ms / 1000));
  return formatDuration(seconds < 60 ? seconds : Math.floor(seconds / 60) * 60);
}

export function costLines(cost: CostEstimate, idleMs: number): { perHour: string; sinceIdle: string } {
  if (!cost.known) return { perHour: `unknown (${cost.reason})`, sinceIdle: 'unknown' };
  const since = (cost.perHour * idleMs) / 3_600_000;
  return { perHour: `${formatUsd(cost.perHour)}/h`, sinceIdle: formatUsd(since) };
}

export function idleAlertMessage(input: IdleAlertInput): { text: string; blocks: KnownBlock[] } {
  const idleMs = input.now - input.since;
  const { perHour, sinceIdle } = costLines(input.cost, idleMs);
  const name = escapeText(input.name);
  const head =
    `:zzz: *${name}* has been idle for at least ${idleFor(idleMs)}: its GPU utilisation stayed below ` +
    `${input.thresholdPercent}% (at most ${Math.round(input.maxUtil * 10) / 10}%).`;
  const value = JSON.stringify({ i: input.instanceId, p: input.projectId, n: clip(input.name, 128) });
  const actions: ActionsBlock = {
    type: 'actions',
    block_id: IDLE_ACTIONS_BLOCK,
    elements: [
      button('Stop', IDLE_ACTIONS.stop, value, 'danger'),
      button('Keep for 2 hours', IDLE_ACTIONS.keep, value),
      button('Snooze for a day', IDLE_ACTIONS.snooze, value),
    ],
  };
  const notes = [
    input.ownerId ? `owner <@${input.ownerId}>` : 'owner unknown (not created through gpuops)',
    ...(input.chart ? ['GPU chart in the thread'] : []),
    ...(input.autoStopAfterSeconds !== undefined
      ? [`the policy stops it if nobody answers within ${formatDuration(input.autoStopAfterSeconds)}`]
      : []),
  ];
  const blocks: KnownBlock[] = [
    { type: 'section', text: { type: 'mrkdwn', text: clip(head) } },
    {
      type: 'section',
      fields: [
        { type: 'mrkdwn', text: `*Type*\n${escapeText(input.type)}` },
        { type: 'mrkdwn', text: `*Costs*\n${escapeText(perHour)}` },
        { type: 'mrkdwn', text: `*Spent while idle*\n${escapeText(sinceIdle)}` },
        { type: 'mrkdwn', text: `*Instance*\n\`${escapeText(input.instanceId.slice(0, 8))}\`` },
      ],
    },
    { type: 'context', elements: [{ type: 'mrkdwn', text: clip(notes.join(' · '), 2000) }] },
    actions,
  ];
  const text = `${input.name} has been idle for at least ${idleFor(idleMs)} (GPU below ${input.thresholdPercent}%), costing ${perHour}.`;
  return { text: clip(text, 3000), blocks };
}

/** The alert once answered: the buttons give way to who answered what. */
export function answeredAlertBlocks(blocks: readonly unknown[], note: string): KnownBlock[] {
  const kept = blocks.filter(
    (b) => (b as { type?: string; block_id?: string }).block_id !== IDLE_ACTIONS_BLOCK,
  ) as KnownBlock[];
  const context: KnownBlock = { type: 'context', elements: [{ type: 'mrkdwn', text: clip(note, 2000) }] };
  return [...kept, context].slice(0, 50);
}

/** The thread reply when the policy stopped an instance nobody answered for. */
export function autoStopReply(input: {
  readonly name: string;
  readonly idleMs: number;
  readonly unansweredMs: number;
}): string {
  return `:octagonal_sign: Stopped by the gpuops policy: *${escapeText(input.name)}* was idle for at least ${idleFor(input.idleMs)} and nobody answered this alert for ${idleFor(input.unansweredMs)}.`;
}
