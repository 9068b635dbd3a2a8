import type { KnownBlock } from '@slack/types';
import { type BudgetFigures, budgetGaugeLine } from '../../render/budget-gauge.js';
import { clip } from '../../render/job-message.js';

// The person's budgets as gauges: those they own, and those covering the projects they work in.

/** At most this many gauges, so the Home tab stays within Slack's 100 blocks. */
export const MAX_HOME_BUDGETS = 10;

export function budgetsSection(budgets: readonly BudgetFigures[]): KnownBlock[] {
  const shown = budgets.slice(0, MAX_HOME_BUDGETS);
  const more =
    budgets.length > shown.length
      ? `\n_and ${budgets.length - shown.length} more: \`/gpu budget\` lists them all_`
      : '';
  return [
    {
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: clip(
          `*Your budgets* (${shown[0]?.month ?? ''})\n${shown.map(budgetGaugeLine).join('\n')}${more}`,
        ),
      },
    },
  ];
}
