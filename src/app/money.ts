import { budgetStatus } from '../budgets/forecast.js';
import { readPowerPlans } from '../budgets/power-plans.js';
import { createSpendSource } from '../budgets/spend-source.js';
import type { MoneyPort } from '../commands/kit/money-port.js';
import type { HomeBudgets } from '../home/home-deps.js';
import type { Policy } from '../policy/policy.js';
import type { ChartFonts } from '../render/render-chart-png.js';
import type { Leases } from '../store/leases.js';
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
  /** The leases whose stops lower the forecast (with the power schedules in Redis). */
  readonly leases: Pick<Leases, 'activeFor'>;
  readonly now?: () => number;
}): MoneyParts {
  const { policy } = deps;
  const spend = createSpendSource({ store: deps.store, policy });
  // Each budget of the policy beside its month, in the policy's order (budgets/forecast.ts).
  const months: BudgetWatch['months'] = async (now) => {
    if (policy.budgets.length === 0) return [];
    const plans = await readPowerPlans({ store: deps.store, leases: deps.leases }, await spend.running());
    const statuses = await budgetStatus(policy, spend, now, plans);
    return policy.budgets.map((budget, i) => ({ budget, status: statuses[i]! }));
  };
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
