import type { Store } from './store.js';
import { watchKey } from './watch-keys.js';

// Each budget alert is said once per threshold, budget and month, however many watchers look: the
// first to set its claim key posts it. The key outlives the month so a late look does not post again.
//
// Keys: <prefix>:{watch}:budget-alert:<budget>:<YYYY-MM>:<threshold>   (threshold: actual-80, forecast-100)

const CLAIM_TTL_SECONDS = 62 * 86_400;

export interface BudgetAlertClaims {
  /** True for the one caller that claims the alert first. */
  claim(budget: string, month: string, threshold: string): Promise<boolean>;
  /** Gives the claim back when the alert could not be queued, so the next look tries again. */
  release(budget: string, month: string, threshold: string): Promise<void>;
}

export function budgetAlertKey(prefix: string, budget: string, month: string, threshold: string): string {
  return watchKey(prefix, 'budget-alert', encodeURIComponent(budget), month, threshold);
}

export function createBudgetAlertClaims(store: Pick<Store, 'redis' | 'prefix'>): BudgetAlertClaims {
  return {
    async claim(budget, month, threshold) {
      const key = budgetAlertKey(store.prefix, budget, month, threshold);
      return (await store.redis.set(key, String(Date.now()), 'EX', CLAIM_TTL_SECONDS, 'NX')) === 'OK';
    },
    async release(budget, month, threshold) {
      await store.redis.del(budgetAlertKey(store.prefix, budget, month, threshold));
    },
  };
}
