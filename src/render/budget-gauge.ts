import { formatUsd } from '../pricing/cost.js';
import { escapeText } from './job-message.js';

// A budget's month in one line, as `/gpu budget`, the Home tab and the daily digest show it: a gauge
// of the actual spend against the budget, the forecast to the month's end, and the state in words.

/** A budget's month (budgets/spend-model.ts BudgetStatus fits it; render/ does not import budgets/). */
export interface BudgetFigures {
  readonly name: string;
  readonly monthlyUsd: number;
  readonly actualUsd: number;
  readonly forecastUsd: number;
  readonly state: 'ok' | 'forecast_over' | 'over';
  readonly month: string;
}

const CELLS = 10;

/** Whole percent of the budget, 0 for a budget of nothing. */
export function percentOf(usd: number, budgetUsd: number): number {
  return budgetUsd > 0 ? Math.round((usd / budgetUsd) * 100) : 0;
}

/** `▰▰▰▱▱▱▱▱▱▱`: the actual spend in tenths of the budget, full past 100 %. */
export function gaugeBar(usd: number, budgetUsd: number): string {
  const filled = budgetUsd > 0 ? Math.min(CELLS, Math.max(0, Math.round((usd / budgetUsd) * CELLS))) : 0;
  return '▰'.repeat(filled) + '▱'.repeat(CELLS - filled);
}

export const STATE_WORDS: Readonly<Record<BudgetFigures['state'], string>> = {
  ok: 'on track',
  forecast_over: 'forecast over budget',
  over: 'over budget',
};

const STATE_EMOJI: Readonly<Record<BudgetFigures['state'], string>> = {
  ok: ':large_green_circle:',
  forecast_over: ':large_yellow_circle:',
  over: ':red_circle:',
};

/** `:large_green_circle: *research* ▰▰▰▱▱▱▱▱▱▱ $12,000.00 of $40,000.00 (30 %) · forecast $36,000.00 (90 %) · on track` */
export function budgetGaugeLine(b: BudgetFigures): string {
  return (
    `${STATE_EMOJI[b.state]} *${escapeText(b.name)}* \`${gaugeBar(b.actualUsd, b.monthlyUsd)}\` ` +
    `${formatUsd(b.actualUsd)} of ${formatUsd(b.monthlyUsd)} (${percentOf(b.actualUsd, b.monthlyUsd)} %) · ` +
    `forecast ${formatUsd(b.forecastUsd)} (${percentOf(b.forecastUsd, b.monthlyUsd)} %) · ${STATE_WORDS[b.state]}`
  );
}

/** The same in plain words, for a digest line or a notification's text. */
export function budgetPlainLine(b: BudgetFigures): string {
  return (
    `${b.name}: ${formatUsd(b.actualUsd)} of ${formatUsd(b.monthlyUsd)} (${percentOf(b.actualUsd, b.monthlyUsd)} %), ` +
    `forecast ${formatUsd(b.forecastUsd)} (${percentOf(b.forecastUsd, b.monthlyUsd)} %), ${STATE_WORDS[b.state]}`
  );
}
