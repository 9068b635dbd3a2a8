import type { Policy } from '../policy/policy.js';
import { type CostEstimate, estimateMachines, gpusOfType, type PriceBook } from '../pricing/cost.js';
import { readCatalog } from '../store/catalog-cache.js';
import type { Store } from '../store/store.js';
import type { ProjectSnapshot } from '../store/watch-snapshots.js';

export { periodsOf } from '../store/ledger-periods.js';

// Estimated spend as the watchers see it: prices from the cached catalogue (the platform API's
// configurations, refreshed every few minutes), the machine's GPUs from its type, and running time
// from successive polls. Only time a project is watched is counted (docs/watch.md).

/** A single look never counts for more than this, so an outage does not read as a day of spending. */
export const MAX_ACCRUAL_MS = 3_600_000;

/** The price book of a project: the cached configurations and the policy's pricing rules. */
export async function priceBookFor(
  store: Store,
  projectId: string | undefined,
  policy: Policy,
): Promise<PriceBook> {
  const cached = await readCatalog(store, projectId).catch(() => undefined);
  return { configurations: cached?.catalog.configurations, pricing: policy.pricing };
}

export function runningCost(type: string, prices: PriceBook): CostEstimate {
  return estimateMachines({ prices, type, state: 'running' });
}

export interface Accrual {
  readonly usd: number;
  /** GPU-hours per instance id. */
  readonly gpuHours: Record<string, number>;
}

/**
 * What the instances running at the previous look cost until this one: the time between the two
 * looks (at most MAX_ACCRUAL_MS) × their GPUs and price. Instances without a known price count
 * GPU-hours but no dollars.
 */
export function accrue(previous: ProjectSnapshot, now: number, prices: PriceBook): Accrual {
  const ms = Math.min(Math.max(0, now - previous.polledAt), MAX_ACCRUAL_MS);
  const hours = ms / 3_600_000;
  let usd = 0;
  const gpuHours: Record<string, number> = {};
  if (hours === 0) return { usd, gpuHours };
  // Thousands of machines share a handful of types: price each type once.
  const byType = new Map<string, { gpus: number; cost: CostEstimate }>();
  for (const r of Object.values(previous.resources)) {
    if (r.kind !== 'instance' || r.fields.state !== 'running') continue;
    const type = r.fields.type ?? '';
    let known = byType.get(type);
    if (!known) {
      known = { gpus: gpusOfType(type, prices.pricing)?.gpuCount ?? 0, cost: runningCost(type, prices) };
      byType.set(type, known);
    }
    if (known.gpus > 0) gpuHours[r.id] = known.gpus * hours;
    if (known.cost.known) usd += known.cost.perHour * hours;
  }
  return { usd, gpuHours };
}
