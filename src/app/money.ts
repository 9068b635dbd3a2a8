import { createSpendSource } from '../budgets/spend-source.js';
import type { MoneyPort } from '../commands/kit/money-port.js';
import type { HomeBudgets } from '../home/home-deps.js';
import type { Policy } from '../policy/policy.js';
import type { ChartFonts } from '../render/render-chart-png.js';
import type { Store } from '../store/store.js';
import type { BudgetWatch } from '../watch/budget-watch.js';

// The money views composed: the spend ledger (budgets/spend-source.ts) and the policy's budgets with
// their forecast, as `/gpu spend`, `/gpu budget` (MoneyPort) and the budget alerts (BudgetWatch) read them.

export interface MoneyParts {
  readonly port: MoneyPort;
  readonly watch: BudgetWatch;
  readonly home: HomeBudgets;
}

export function createMoney(deps: {
  readonly store: Store;
  readonly policy: Policy;
  readonly fonts: ChartFonts | undefined;
  readonly now?: () => number;
}): MoneyParts {
  const spend = createSpendSource({ store: deps.store, policy: deps.policy });
  const months: BudgetWatch['months'] = async () => [];
  return {
    port: {
      tz: deps.policy.digest.tz,
      fonts: deps.fonts,
      rows: (query) => spend.rows(query),
      budgets: async () => (await months((deps.now ?? Date.now)())).map((m) => m.status),
    },
    watch: { months, rows: (query) => spend.rows(query), fonts: deps.fonts },
    home: async (now) =>
      (await months(now)).map((m) => ({
        owners: m.budget.owners,
        projects: m.budget.projects,
        status: m.status,
      })),
  };
}
