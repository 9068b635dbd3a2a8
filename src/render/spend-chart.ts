import type { ChartSpec } from './chart-spec.js';

// The pictures of spend: dollars a day over a period (`/gpu spend`), and a budget's month (its alert):
// the actual spend summed day by day, the forecast from today to the month's end, and the budget.

const DAY_MS = 86_400_000;
const dayAt = (day: string) => Date.parse(`${day}T00:00:00Z`);

export interface DaySpend {
  readonly day: string;
  readonly usd: number;
}

/** One point a day, at the day's middle: the points' values add up to the period's total. */
export function spendChartSpec(title: string, byDay: readonly DaySpend[]): ChartSpec {
  const start = byDay.length > 0 ? dayAt(byDay[0]!.day) : 0;
  const end = byDay.length > 0 ? dayAt(byDay.at(-1)!.day) + DAY_MS : DAY_MS;
  return {
    title,
    unit: '$',
    start,
    end,
    stepMs: DAY_MS,
    min: 0,
    width: 1000,
    height: 500,
    series: [
      { label: 'dollars a day', points: byDay.map((d) => ({ t: dayAt(d.day) + DAY_MS / 2, v: d.usd })) },
    ],
  };
}

export interface BudgetChartInput {
  readonly name: string;
  readonly monthlyUsd: number;
  readonly forecastUsd: number;
  /** Every day of the month, in order. */
  readonly monthDays: readonly string[];
  /** Dollars of each day so far (the days up to today). */
  readonly byDay: readonly DaySpend[];
}

/** Actual to date (summed at each day's end), forecast from there to the month's end, the budget line. */
export function budgetChartSpec(input: BudgetChartInput): ChartSpec {
  const first = dayAt(input.monthDays[0]!);
  const end = dayAt(input.monthDays.at(-1)!) + DAY_MS;
  let sum = 0;
  const actual = [{ t: first, v: 0 }];
  for (const d of input.byDay) {
    sum += d.usd;
    actual.push({ t: dayAt(d.day) + DAY_MS, v: sum });
  }
  const last = actual.at(-1)!;
  // Forecast and budget are straight lines; their points are one day apart so the chart draws them unbroken.
  const line = (from: { t: number; v: number }, to: number) => {
    const points: Array<{ t: number; v: number }> = [];
    const days = Math.max(1, Math.round((end - from.t) / DAY_MS));
    for (let k = 0; k <= days; k++) {
      points.push({ t: from.t + k * DAY_MS, v: from.v + ((to - from.v) * k) / days });
    }
    return points;
  };
  return {
    title: `Budget ${input.name}: spend this month`,
    unit: '$',
    start: first,
    end,
    stepMs: DAY_MS,
    min: 0,
    width: 1000,
    height: 500,
    series: [
      { label: 'actual', points: actual },
      { label: 'forecast', points: line(last, input.forecastUsd) },
      { label: 'budget', points: line({ t: first, v: input.monthlyUsd }, input.monthlyUsd) },
    ],
  };
}
