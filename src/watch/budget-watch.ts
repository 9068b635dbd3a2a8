import type { SpendLine } from '../commands/budgets/spend-report.js';
import type { BudgetFigures } from '../render/budget-gauge.js';
import type { ChartFonts } from '../render/render-chart-png.js';

// What the budget alerts and the digest's budget lines read (composed in app/money.ts), apart from the
// alerts' code so the watchers' deps can name it without importing that code.

/** A budget as its alerts need it (the policy's `budgets:`, composed in app/). */
export interface AlertedBudget {
  readonly name: string;
  /** Empty: every project. */
  readonly projects: readonly string[];
  readonly owners: readonly string[];
  readonly channel?: string | undefined;
  /** Percentages of the budget spent. */
  readonly alertAt: readonly number[];
  readonly forecastAlert: boolean;
}

/** What the alerts read, composed in app/ from the policy, the spend ledger and the forecast. */
export interface BudgetWatch {
  /** Each budget and its month at `now`. */
  months(
    now: number,
  ): Promise<ReadonlyArray<{ readonly budget: AlertedBudget; readonly status: BudgetFigures }>>;
  /** Ledger rows, days `from` to `to` inclusive, of some projects (all when absent). */
  rows(query: {
    readonly from: string;
    readonly to: string;
    readonly projects?: readonly string[];
  }): Promise<readonly SpendLine[]>;
  /** Fonts for the chart; without them the alert goes without it. */
  readonly fonts?: ChartFonts | undefined;
}
