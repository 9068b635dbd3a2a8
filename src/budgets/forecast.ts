import { CronExpressionParser } from 'cron-parser';
import type { BudgetPolicy, Policy } from '../policy/policy.js';
import { periodsOf } from '../store/ledger-periods.js';
import type { Schedule } from '../store/schedules.js';
import type { BudgetStatus, RunningMachine, SpendSource } from './spend-model.js';

// A budget's month: spent so far (the ledger's rows of the month), and the forecast: that plus every
// machine running now at its price until the month ends, or until a power schedule or its lease
// stops it (a schedule's later start runs it again). Machines stopped now are not counted: a request
// that starts one is held against the forecast when it is made (admission, docs/budgets.md).

/** What will stop (and start again) machines running now. */
export interface PowerPlans {
  /** Power schedules (src/store/schedules.ts) on an instance; tag schedules through `tagged`. */
  readonly schedules: readonly Schedule[];
  /** A lease's stop time (epoch ms) by instance id. */
  readonly leaseEnds: ReadonlyMap<string, number>;
  /** The instance ids a tag schedule acts on, by schedule id (undefined: it is not counted). */
  readonly tagged?: ReadonlyMap<string, ReadonlySet<string>>;
}

export const NO_PLANS: PowerPlans = { schedules: [], leaseEnds: new Map() };

/** Firings looked at per schedule and month: a schedule every minute is still bounded. */
const MAX_FIRINGS = 5_000;
const HOUR_MS = 3_600_000;

/** The calendar month of `now` in `tz`: `YYYY-MM`, its first instant and the next month's. */
export function monthBounds(now: number, tz: string): { month: string; start: number; end: number } {
  const { month } = periodsOf(now, tz);
  const inMonth = (t: number) => periodsOf(t, tz).month === month;
  // The first instant for which `inMonth` differs from its value at `from`, between `from` and `to`.
  const edge = (from: number, to: number): number => {
    let [a, b] = [from, to];
    while (Math.abs(b - a) > 1) {
      const mid = Math.floor((a + b) / 2);
      if (inMonth(mid) === inMonth(from)) a = mid;
      else b = mid;
    }
    return Math.max(a, b);
  };
  const day = 86_400_000;
  let after = now + day;
  while (inMonth(after)) after += day;
  let before = now - day;
  while (inMonth(before)) before -= day;
  return { month, start: edge(before, now), end: edge(now, after) };
}

function targets(schedule: Schedule, machine: RunningMachine, plans: PowerPlans): boolean {
  if (schedule.paused || schedule.projectId !== machine.project) return false;
  const t = schedule.target;
  if ('instance' in t) return t.instance === machine.instance;
  return plans.tagged?.get(schedule.id)?.has(machine.instance) ?? false;
}

function firings(schedule: Schedule, from: number, to: number): number[] {
  try {
    const expression = CronExpressionParser.parse(schedule.pattern, {
      tz: schedule.tz,
      currentDate: new Date(from),
      endDate: new Date(to),
    });
    const out: number[] = [];
    while (out.length < MAX_FIRINGS && expression.hasNext()) out.push(expression.next().getTime());
    return out;
  } catch {
    return [];
  }
}

/** Hours `machine` (running at `now`) will run before `end`, following its schedules and lease. */
export function runningHoursLeft(
  machine: RunningMachine,
  now: number,
  end: number,
  plans: PowerPlans,
): number {
  const events: Array<{ at: number; run: boolean }> = [];
  for (const s of plans.schedules) {
    if (!targets(s, machine, plans)) continue;
    for (const at of firings(s, now, end)) events.push({ at, run: s.action === 'start' });
  }
  const lease = plans.leaseEnds.get(machine.instance);
  if (lease !== undefined && lease < end) events.push({ at: Math.max(lease, now), run: false });
  // At one instant a stop wins: a lease ending as a start fires leaves the machine stopped.
  events.sort((a, b) => a.at - b.at || Number(a.run) - Number(b.run));
  let ms = 0;
  let since: number | undefined = now;
  for (const e of events) {
    if (since !== undefined && !e.run) {
      ms += e.at - since;
      since = undefined;
    } else if (since === undefined && e.run) {
      since = e.at;
    }
  }
  if (since !== undefined) ms += end - since;
  return ms / HOUR_MS;
}

/** Whether a budget covers a project (no projects: every one). */
export function covers(budget: Pick<BudgetPolicy, 'projects'>, projectId: string): boolean {
  return budget.projects.length === 0 || budget.projects.includes(projectId.toLowerCase());
}

/** Each budget's month: actual, forecast and state, in the policy's order. */
export async function budgetStatus(
  policy: Pick<Policy, 'budgets' | 'digest'>,
  source: SpendSource,
  now: number,
  plans: PowerPlans = NO_PLANS,
): Promise<BudgetStatus[]> {
  if (policy.budgets.length === 0) return [];
  const tz = policy.digest.tz;
  const { month, end } = monthBounds(now, tz);
  const today = periodsOf(now, tz).day;
  // Read once for every budget; each takes its projects. A budget of every project reads them all.
  const projects = policy.budgets.some((b) => b.projects.length === 0)
    ? undefined
    : [...new Set(policy.budgets.flatMap((b) => b.projects))];
  const [rows, running] = await Promise.all([
    source.rows({ from: `${month}-01`, to: today, ...(projects ? { projects } : {}) }),
    source.running(projects),
  ]);
  const ahead = new Map(running.map((m) => [m, m.usdPerHour * runningHoursLeft(m, now, end, plans)]));
  return policy.budgets.map((b) => {
    const actualUsd = rows.filter((r) => covers(b, r.project)).reduce((sum, r) => sum + r.usd, 0);
    const toCome = running
      .filter((m) => covers(b, m.project))
      .reduce((sum, m) => sum + (ahead.get(m) ?? 0), 0);
    const forecastUsd = actualUsd + toCome;
    const state = actualUsd > b.monthlyUsd ? 'over' : forecastUsd > b.monthlyUsd ? 'forecast_over' : 'ok';
    return {
      name: b.name,
      monthlyUsd: b.monthlyUsd,
      actualUsd: cents(actualUsd),
      forecastUsd: cents(forecastUsd),
      state,
      month,
    };
  });
}

const cents = (usd: number) => Math.round(usd * 100) / 100;
