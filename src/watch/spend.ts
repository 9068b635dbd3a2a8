import type { Policy } from '../policy/policy.js';
import { type CostEstimate, estimateMachines, gpusOfType, type PriceBook } from '../pricing/cost.js';
import { periodsOf } from '../store/ledger-periods.js';
import type { Store } from '../store/store.js';
import { watchedPrices } from '../store/watch-prices.js';
import {
  type LedgerChange,
  type Opening,
  type ProjectSnapshot,
  resourceList,
  type WatchedResource,
} from '../store/watch-snapshots.js';
import type { ResourceChange } from './diff-snapshot.js';

export { periodsOf };

// Estimated spend as the watchers see it: prices from the cached catalogue (the platform API's
// configurations, refreshed every few minutes), the machine's GPUs from its type, and running time
// from successive polls. Every project gpuops acts on is looked at, watched by a channel or not
// (docs/budgets.md has the accuracy of this count).

/** A single look never counts for more than this, so an outage does not read as a day of spending. */
export const MAX_ACCRUAL_MS = 3_600_000;

/** The price book of a project: the cached configurations and the policy's pricing rules. */
export async function priceBookFor(
  store: Store,
  projectId: string | undefined,
  policy: Policy,
): Promise<PriceBook> {
  const configurations = await watchedPrices(store, projectId).catch(() => undefined);
  return { configurations, pricing: policy.pricing };
}

export function runningCost(type: string, prices: PriceBook): CostEstimate {
  return estimateMachines({ prices, type, state: 'running' });
}

/** Running instances of a snapshot by type (computed once per snapshot object). */
const runningByType = new WeakMap<ProjectSnapshot, ReadonlyMap<string, number>>();

function runningTypes(snapshot: ProjectSnapshot): ReadonlyMap<string, number> {
  let counts = runningByType.get(snapshot);
  if (!counts) {
    const byType = new Map<string, number>();
    for (const r of resourceList(snapshot.resources)) {
      if (r.kind === 'instance' && r.fields.state === 'running') {
        const type = r.fields.type ?? '';
        byType.set(type, (byType.get(type) ?? 0) + 1);
      }
    }
    counts = byType;
    runningByType.set(snapshot, counts);
  }
  return counts;
}

/** The running counts after `changes`, from those before: the next look need not count the fleet again. */
function nextRunningTypes(
  before: ReadonlyMap<string, number>,
  changes: readonly ResourceChange[],
): ReadonlyMap<string, number> {
  const counts = new Map(before);
  const add = (r: WatchedResource | undefined, n: number) => {
    if (!r || !isRunning(r)) return;
    const type = r.fields.type ?? '';
    counts.set(type, (counts.get(type) ?? 0) + n);
  };
  for (const c of changes) {
    if (c.type === 'changed') add(c.previous, -1);
    if (c.type === 'gone') add(c.resource, -1);
    else add(c.resource, 1);
  }
  return counts;
}

const isRunning = (r: WatchedResource) => r.kind === 'instance' && r.fields.state === 'running';

/** Running instances with GPUs, as ledger intervals: GPUs, price (0 when unknown), type and name. */
function openings(resources: Iterable<WatchedResource>, prices: PriceBook): Opening[] {
  const out: Opening[] = [];
  // Priced once per type: a day's first look opens the whole fleet's intervals.
  const byType = new Map<string, { gpus: number; usdPerHour: number }>();
  for (const r of resources) {
    if (!isRunning(r)) continue;
    const type = r.fields.type ?? '';
    let known = byType.get(type);
    if (!known) {
      const cost = runningCost(type, prices);
      known = {
        gpus: gpusOfType(type, prices.pricing)?.gpuCount ?? 0,
        usdPerHour: cost.known ? cost.perHour : 0,
      };
      byType.set(type, known);
    }
    if (known.gpus > 0) out.push({ id: r.id, ...known, type, ...(r.name ? { name: r.name } : {}) });
  }
  return out;
}

/**
 * What a look adds to the spend ledger (store/watch-ledger.ts). The instances running at the previous
 * look cost the time between the two looks (at most MAX_ACCRUAL_MS) × their GPUs and price, priced per
 * type; instances without a known price count GPU-hours but no dollars. Per instance, only the changes
 * are written: intervals open when an instance starts running and close when it stops or goes. A
 * baseline (no previous look) opens an interval for everything running; the first look of a new day
 * closes the previous day's and opens the new day's for what ran at the previous look.
 */
export function ledgerChange(
  previous: ProjectSnapshot | undefined,
  changes: readonly ResourceChange[],
  next: ProjectSnapshot,
  prices: PriceBook,
  tz: string,
): LedgerChange {
  const { day, month } = periodsOf(next.polledAt, tz);
  if (!previous) {
    return {
      day,
      month,
      usd: 0,
      gpuHours: 0,
      hours: 0,
      openBefore: openings(resourceList(next.resources), prices),
      close: [],
      open: [],
    };
  }
  const previousDay = periodsOf(previous.polledAt, tz).day;
  const ms = Math.min(Math.max(0, next.polledAt - previous.polledAt), MAX_ACCRUAL_MS);
  const hours = ms / 3_600_000;
  let usd = 0;
  let gpuHours = 0;
  for (const [type, count] of runningTypes(previous)) {
    const gpus = gpusOfType(type, prices.pricing)?.gpuCount ?? 0;
    const cost = runningCost(type, prices);
    gpuHours += gpus * hours * count;
    if (cost.known) usd += cost.perHour * hours * count;
  }
  const close: string[] = [];
  const started: WatchedResource[] = [];
  for (const c of changes) {
    const before = c.type === 'changed' ? c.previous : c.type === 'gone' ? c.resource : undefined;
    const after = c.type === 'gone' ? undefined : c.resource;
    const wasRunning = before !== undefined && isRunning(before);
    const isNowRunning = after !== undefined && isRunning(after);
    if (wasRunning && !isNowRunning) close.push(before.id);
    if (isNowRunning && !wasRunning) started.push(after);
  }
  runningByType.set(next, nextRunningTypes(runningTypes(previous), changes));
  return {
    day,
    month,
    ...(previousDay !== day ? { previousDay } : {}),
    usd,
    gpuHours,
    hours,
    openBefore: previousDay !== day ? openings(resourceList(previous.resources), prices) : [],
    close,
    open: openings(started, prices),
  };
}
