import type { BudgetFigures } from '../../render/budget-gauge.js';
import type { ChartFonts } from '../../render/render-chart-png.js';
import type { SpendLine } from '../budgets/spend-report.js';

/**
 * What `/gpu spend` and `/gpu budget` read, composed in app/ from the spend ledger and the policy's
 * budgets (docs/budgets.md). A port, so commands/ does not import budgets/ (which reads the policy).
 */
export interface MoneyPort {
  /** The time zone the ledger's days are named in (the digest's `tz`). */
  readonly tz: string;
  /** Fonts for the charts; without them `/gpu spend` answers with the figures alone. */
  readonly fonts?: ChartFonts | undefined;
  /** Ledger rows of every project, days `from` to `to` inclusive (YYYY-MM-DD). */
  rows(query: { readonly from: string; readonly to: string }): Promise<readonly SpendLine[]>;
  /** Each budget of the policy, this month, in the policy's order. */
  budgets(): Promise<readonly BudgetFigures[]>;
}
