import type { KnownBlock } from '@slack/types';
import { formatUsd } from '../pricing/cost.js';
import { PRICE_LIST_NOTE } from '../pricing/offered-types.js';
import { type BudgetFigures, budgetGaugeLine } from './budget-gauge.js';
import { countNoun } from './count-noun.js';
import { idleFor } from './idle-alert.js';
import { clip, escapeText } from './job-message.js';
import { slackDate } from './slack-date.js';

// The daily digest of a watching channel: what runs and its GPU-hours, estimated spend for the day and
// the month so far, idle instances, approvals waiting, and capacity for the types the channel uses.
// Pure builder over figures the digest job gathered.

export interface DigestInput {
  readonly projectLabel: string;
  /** The day the figures are for (YYYY-MM-DD, in the digest's time zone) and that zone. */
  readonly day: string;
  readonly tz: string;
  readonly running: ReadonlyArray<{
    readonly name: string;
    readonly type: string;
    readonly gpus: number | undefined;
    readonly gpuHoursToday: number;
  }>;
  readonly spendTodayUsd: number;
  readonly spendMonthUsd: number;
  /** Instances running without a known price (their spend is not in the figures). */
  readonly unpriced: readonly string[];
  readonly idle: ReadonlyArray<{ readonly name: string; readonly idleMs: number }>;
  readonly approvals: ReadonlyArray<{
    readonly request: string;
    readonly requester: string;
    readonly expiresAt: number;
  }>;
  /** Per type the channel uses: `3 available`, or from the price list `offered in NORWAY`. */
  readonly capacity?: ReadonlyArray<{ readonly type: string; readonly available: string }>;
  /** Where the capacity figures come from; the price list cannot count free machines. */
  readonly capacitySource?: 'capacity' | 'price-list';
  /** The budgets covering the project this month, one line each (docs/budgets.md). */
  readonly budgets?: readonly BudgetFigures[];
  readonly now: number;
}

const section = (text: string): KnownBlock => ({
  type: 'section',
  text: { type: 'mrkdwn', text: clip(text) },
});
const hours = (h: number) => (h >= 10 ? h.toFixed(0) : h.toFixed(1));

export function digestMessage(input: DigestInput): { text: string; blocks: KnownBlock[] } {
  const blocks: KnownBlock[] = [
    section(
      `:newspaper: *Daily digest* · project ${escapeText(input.projectLabel)} · ${input.day} (${escapeText(input.tz)})`,
    ),
  ];
  const gpuHours = input.running.reduce((n, r) => n + r.gpuHoursToday, 0);
  const running =
    input.running.length === 0
      ? '*Running*: nothing.'
      : `*Running* (${input.running.length}, ${hours(gpuHours)} GPU-hours today)\n${input.running
          .map(
            (r) =>
              `• *${escapeText(r.name)}* · ${escapeText(r.type)}${r.gpus ? ` · ${r.gpus} GPU${r.gpus === 1 ? '' : 's'}` : ''} · ${hours(r.gpuHoursToday)} GPU-hours today`,
          )
          .join('\n')}`;
  blocks.push(section(running));
  const unpriced =
    input.unpriced.length > 0
      ? `\n_Not priced (type or price unknown): ${input.unpriced.map(escapeText).join(', ')}._`
      : '';
  blocks.push(
    section(
      `*Estimated spend*: ${formatUsd(input.spendTodayUsd)} today · ${formatUsd(input.spendMonthUsd)} this month so far${unpriced}`,
    ),
  );
  if (input.budgets && input.budgets.length > 0) {
    blocks.push(
      section(`*Budgets* this month\n${input.budgets.map((b) => `• ${budgetGaugeLine(b)}`).join('\n')}`),
    );
  }
  blocks.push(
    section(
      input.idle.length === 0
        ? '*Idle GPUs*: none.'
        : `*Idle GPUs* (${input.idle.length})\n${input.idle
            .map((i) => `• *${escapeText(i.name)}* · idle for at least ${idleFor(i.idleMs)}`)
            .join('\n')}`,
    ),
  );
  blocks.push(
    section(
      input.approvals.length === 0
        ? '*Approvals waiting*: none.'
        : `*Approvals waiting* (${input.approvals.length})\n${input.approvals
            .slice(0, 20)
            .map(
              (a) =>
                `• \`${escapeText(a.request)}\` by <@${a.requester}> · expires ${slackDate(a.expiresAt)}`,
            )
            .join('\n')}`,
    ),
  );
  if (input.capacity) {
    blocks.push(
      section(
        input.capacity.length === 0
          ? '*Capacity*: this channel uses no instance type yet.'
          : `*Capacity* of the types this channel uses\n${input.capacity
              .map((c) => `• ${escapeText(c.type)}: ${escapeText(c.available)}`)
              .join('\n')}${input.capacitySource === 'price-list' ? `\n_${PRICE_LIST_NOTE}_` : ''}`,
      ),
    );
  }
  blocks.push({
    type: 'context',
    elements: [
      {
        type: 'mrkdwn',
        text: 'Spend is estimated from the prices of the platform API for the time gpuops watched the project. Turn the digest off in the policy (digest.enabled) or stop watching with `/gpu watch off`.',
      },
    ],
  });
  const text = `Daily digest ${input.day}: ${input.running.length} running, ${formatUsd(input.spendTodayUsd)} today, ${formatUsd(input.spendMonthUsd)} this month, ${input.idle.length} idle, ${countNoun(input.approvals.length, 'approval')} waiting.`;
  return { text, blocks };
}
