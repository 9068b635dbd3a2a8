// What `/gpu spend` shows, summed from the ledger's rows (one a machine and day): the total, the
// dollars of each day (the chart), and the top spenders by owner, project and instance type. The
// shapes are structural so this family reads the ledger's rows without importing budgets/.

/** A ledger row as `/gpu spend` reads it (budgets/spend-model.ts SpendRow fits it). */
export interface SpendLine {
  readonly day: string;
  readonly project: string;
  readonly instance: string;
  readonly owner?: string | undefined;
  readonly type: string;
  readonly hours: number;
  readonly usd: number;
}

/** Whose spend: a person's machines, a project's, or an instance type's; absent: everything. */
export type SpendFilter =
  | { readonly by: 'person'; readonly user: string }
  | { readonly by: 'project'; readonly project: string }
  | { readonly by: 'type'; readonly type: string };

export interface Spender {
  readonly key: string;
  readonly usd: number;
  readonly hours: number;
}

export interface SpendReport {
  readonly totalUsd: number;
  readonly totalHours: number;
  /** Dollars of each day of the period, in order (zero on days without spend). */
  readonly byDay: ReadonlyArray<{ readonly day: string; readonly usd: number }>;
  readonly byOwner: readonly Spender[];
  readonly byProject: readonly Spender[];
  readonly byType: readonly Spender[];
  /** Machines that ran without a known price: their hours count, their dollars do not. */
  readonly unpriced: number;
}

/** Rows for machines made outside gpuops have no owner. */
export const NO_OWNER = 'made outside gpuops';

export function matchesFilter(row: SpendLine, filter: SpendFilter | undefined): boolean {
  if (!filter) return true;
  if (filter.by === 'person') return row.owner === filter.user;
  if (filter.by === 'project') return row.project === filter.project;
  return row.type === filter.type;
}

function ranked(rows: readonly SpendLine[], keyOf: (r: SpendLine) => string): Spender[] {
  const sums = new Map<string, { usd: number; hours: number }>();
  for (const r of rows) {
    const key = keyOf(r);
    const s = sums.get(key) ?? { usd: 0, hours: 0 };
    s.usd += r.usd;
    s.hours += r.hours;
    sums.set(key, s);
  }
  return [...sums]
    .map(([key, s]) => ({ key, ...s }))
    .sort((a, b) => b.usd - a.usd || b.hours - a.hours || a.key.localeCompare(b.key));
}

export function spendReport(
  rows: readonly SpendLine[],
  days: readonly string[],
  filter?: SpendFilter,
): SpendReport {
  const inDays = new Set(days);
  const mine = rows.filter((r) => inDays.has(r.day) && matchesFilter(r, filter));
  const perDay = new Map<string, number>(days.map((d) => [d, 0]));
  for (const r of mine) perDay.set(r.day, (perDay.get(r.day) ?? 0) + r.usd);
  const unpriced = new Set(mine.filter((r) => r.usd === 0 && r.hours > 0).map((r) => r.instance));
  return {
    totalUsd: mine.reduce((a, r) => a + r.usd, 0),
    totalHours: mine.reduce((a, r) => a + r.hours, 0),
    byDay: days.map((day) => ({ day, usd: perDay.get(day) ?? 0 })),
    byOwner: ranked(mine, (r) => r.owner ?? NO_OWNER),
    byProject: ranked(mine, (r) => r.project),
    byType: ranked(mine, (r) => r.type || 'unknown type'),
    unpriced: unpriced.size,
  };
}

/**
 * A word typed after `/gpu spend` names a project or an instance type: whichever the ledger knows
 * (projects first). Undefined when it knows neither, so the person is told what it does know.
 */
export function nameFilter(word: string, rows: readonly SpendLine[]): SpendFilter | undefined {
  if (rows.some((r) => r.project === word)) return { by: 'project', project: word };
  if (rows.some((r) => r.type === word)) return { by: 'type', type: word };
  return undefined;
}
