import type { KnownBlock } from '@slack/types';
import { formatUsd } from '../pricing/cost.js';
import { type BudgetFigures, budgetGaugeLine, percentOf } from './budget-gauge.js';
import { clip, escapeText } from './job-message.js';

// A budget alert: in the budget's channel (the chart follows in its thread) and in each owner's DM.

/** `actual-80` (80 % of the budget spent) or `forecast-100` (the forecast passed the budget). */
export type BudgetThreshold = `actual-${number}` | 'forecast-100';

export interface BudgetAlertInput {
  readonly budget: BudgetFigures;
  /** The thresholds this look crossed first, lowest first. */
  readonly crossed: readonly BudgetThreshold[];
  /** The top spenders of the month: a person's id, or a few words for machines made elsewhere. */
  readonly top: ReadonlyArray<{ readonly who: string; readonly usd: number }>;
  readonly channel?: string | undefined;
}

function what(input: BudgetAlertInput): string {
  const b = input.budget;
  const actual = input.crossed.filter((t) => t.startsWith('actual-')).map((t) => Number(t.slice(7)));
  const parts: string[] = [];
  if (actual.length > 0) parts.push(`passed ${Math.max(...actual)} % of its ${formatUsd(b.monthlyUsd)}`);
  if (input.crossed.includes('forecast-100')) {
    parts.push(
      `is forecast to end the month at ${formatUsd(b.forecastUsd)}, over its ${formatUsd(b.monthlyUsd)}`,
    );
  }
  return `Budget ${b.name} ${parts.join(' and ')} (${b.month})`;
}

const who = (w: string) => (/^[UW][A-Z0-9]+$/.test(w) ? `<@${w}>` : `_${escapeText(w)}_`);

export function budgetAlertMessage(input: BudgetAlertInput): { text: string; blocks: KnownBlock[] } {
  const b = input.budget;
  const text = `${what(input)}: ${formatUsd(b.actualUsd)} spent (${percentOf(b.actualUsd, b.monthlyUsd)} %), forecast ${formatUsd(b.forecastUsd)}.`;
  const top = input.top
    .slice(0, 5)
    .map((t) => `• ${who(t.who)}: ${formatUsd(t.usd)}`)
    .join('\n');
  const blocks: KnownBlock[] = [
    { type: 'section', text: { type: 'mrkdwn', text: clip(`:warning: *${escapeText(what(input))}*`) } },
    { type: 'section', text: { type: 'mrkdwn', text: clip(budgetGaugeLine(b)) } },
  ];
  if (top)
    blocks.push({
      type: 'section',
      text: { type: 'mrkdwn', text: clip(`*Top spenders this month*\n${top}`) },
    });
  blocks.push({
    type: 'context',
    elements: [
      {
        type: 'mrkdwn',
        text:
          (input.channel ? `Posted in <#${input.channel}> with the chart; ` : '') +
          'each threshold is said once a month. `/gpu budget` shows every budget, `/gpu spend` who spent it.',
      },
    ],
  });
  return { text, blocks };
}
