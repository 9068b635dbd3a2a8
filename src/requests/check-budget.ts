import { budgetStatus, covers, monthBounds } from '../budgets/forecast.js';
import { readPowerPlans } from '../budgets/power-plans.js';
import { createSpendSource } from '../budgets/spend-source.js';
import type { Guardrails } from '../policy/guardrails.js';
import type { BudgetPolicy } from '../policy/policy.js';
import type { Assessment } from './request-approval.js';

// Admission against the monthly budgets (docs/budgets.md): a request that adds run rate and would take
// a budget's forecast over its amount waits for one of that budget's owners, or is refused under its
// hard cap. Read from Redis only (the ledger, the snapshots, schedules and leases), like the rest of a
// request's checks.

/**
 * The dollars an hour a request adds: its price estimate while it runs, when it starts new spending.
 * The one place admission reads it, so the spec's declared effects can take over here.
 */
export function addedRunRate(assessment: Pick<Assessment, 'cost'>): number | undefined {
  const cost = assessment.cost;
  return cost?.adds && cost.estimate.known && cost.estimate.perHour > 0 ? cost.estimate.perHour : undefined;
}

export type BudgetVerdict =
  | { readonly outcome: 'within' }
  /** Over a budget: its owners decide. */
  | { readonly outcome: 'ask'; readonly reasons: readonly string[]; readonly owners: readonly string[] }
  /** Over a budget with hard_cap: refused, in one sentence. */
  | { readonly outcome: 'refuse'; readonly message: string };

const usd = (n: number) => `$${Math.round(n).toLocaleString('en-US')}`;
const perHour = (n: number) =>
  `$${n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}/h`;

/** The sentence that names the numbers: `forecast $41,200 of $40,000 with this machine`. */
function overBy(b: BudgetPolicy, forecast: number): string {
  return `forecast ${usd(forecast)} of ${usd(b.monthlyUsd)} with this request`;
}

export async function checkBudgets(
  deps: { readonly store: Parameters<typeof createSpendSource>[0]['store'] },
  guardrails: Guardrails,
  projectId: string | undefined,
  assessment: Pick<Assessment, 'cost' | 'lease'>,
  now: number,
): Promise<BudgetVerdict> {
  const { policy } = guardrails;
  const rate = addedRunRate(assessment);
  const budgets = policy.budgets.filter((b) =>
    projectId === undefined ? b.projects.length === 0 : covers(b, projectId),
  );
  if (rate === undefined || budgets.length === 0) return { outcome: 'within' };
  const source = createSpendSource({ store: deps.store, policy });
  // Only the covering budgets' projects are read (all of them when one covers every project).
  const projects = budgets.some((b) => b.projects.length === 0)
    ? undefined
    : [...new Set(budgets.flatMap((b) => b.projects))];
  const plans = await readPowerPlans(
    { store: deps.store, leases: guardrails.leases },
    await source.running(projects),
  );
  const statuses = await budgetStatus({ ...policy, budgets }, source, now, plans);
  // The request runs to the month's end, or to the end of the lease it gets.
  const { end } = monthBounds(now, policy.digest.tz);
  const ms = Math.min(
    end - now,
    assessment.lease ? assessment.lease.seconds * 1000 : Number.POSITIVE_INFINITY,
  );
  const added = rate * (Math.max(ms, 0) / 3_600_000);
  const over = budgets.flatMap((b, i) => {
    const forecast = statuses[i]!.forecastUsd + added;
    return forecast > b.monthlyUsd ? [{ b, forecast }] : [];
  });
  if (over.length === 0) return { outcome: 'within' };
  const capped = over.find((o) => o.b.hardCap);
  if (capped) {
    return {
      outcome: 'refuse',
      message: `:no_entry: Refused: budget ${capped.b.name} has a hard cap, and its forecast would be ${usd(capped.forecast)} of ${usd(capped.b.monthlyUsd)} with this request (${perHour(rate)} to the month's end); stop something in its projects, or ask its owners to raise monthly_usd in the gpuops policy.`,
    };
  }
  return {
    outcome: 'ask',
    reasons: over.map((o) => `Budget ${o.b.name}: ${overBy(o.b, o.forecast)}.`),
    owners: [...new Set(over.flatMap((o) => o.b.owners))],
  };
}
