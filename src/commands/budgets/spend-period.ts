// The periods `/gpu spend` reads, as the ledger names its days (YYYY-MM-DD in the bot's time zone).

export const SPEND_PERIODS = ['this month', 'last month', 'this week'] as const;
export type SpendPeriod = (typeof SPEND_PERIODS)[number];

export interface PeriodDays {
  readonly period: SpendPeriod;
  /** First and last day, inclusive. */
  readonly from: string;
  readonly to: string;
  /** Every day from `from` to `to`. */
  readonly days: readonly string[];
  /** `November 2026`, `the week of 2026-11-23`. */
  readonly label: string;
}

const DAY_MS = 86_400_000;

const dayAt = (day: string) => Date.parse(`${day}T00:00:00Z`);
const dayOf = (at: number) => new Date(at).toISOString().slice(0, 10);

function daysBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let at = dayAt(from); at <= dayAt(to); at += DAY_MS) out.push(dayOf(at));
  return out;
}

function monthName(month: string): string {
  const [y, m] = month.split('-').map(Number);
  const name = new Date(Date.UTC(y!, m! - 1, 1)).toLocaleString('en-US', { month: 'long', timeZone: 'UTC' });
  return `${name} ${y}`;
}

/** The days of a month (`YYYY-MM`), all of them. */
export function monthDays(month: string): string[] {
  const [y, m] = month.split('-').map(Number);
  const last = new Date(Date.UTC(y!, m!, 0)).getUTCDate();
  return daysBetween(`${month}-01`, `${month}-${String(last).padStart(2, '0')}`);
}

/**
 * The days of `period` seen from `today` (its day and month in the bot's time zone, as the ledger
 * names them: store/ledger-periods.ts): a month or week so far, or last month whole.
 */
export function periodDays(
  period: SpendPeriod,
  today: { readonly day: string; readonly month: string },
): PeriodDays {
  const { month } = today;
  if (period === 'this month') {
    const from = `${month}-01`;
    return { period, from, to: today.day, days: daysBetween(from, today.day), label: monthName(month) };
  }
  if (period === 'last month') {
    const previous = dayOf(dayAt(`${month}-01`) - DAY_MS).slice(0, 7);
    const days = monthDays(previous);
    return { period, from: days[0]!, to: days.at(-1)!, days, label: monthName(previous) };
  }
  // Monday first, as the Home tab's week.
  const weekday = (new Date(dayAt(today.day)).getUTCDay() + 6) % 7;
  const from = dayOf(dayAt(today.day) - weekday * DAY_MS);
  return { period, from, to: today.day, days: daysBetween(from, today.day), label: `the week of ${from}` };
}
