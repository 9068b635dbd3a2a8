import { monthDays } from '../commands/budgets/spend-period.js';
import { spendReport } from '../commands/budgets/spend-report.js';
import { type BudgetThreshold, budgetAlertMessage } from '../render/budget-alert.js';
import type { BudgetFigures } from '../render/budget-gauge.js';
import { budgetChartSpec } from '../render/spend-chart.js';
import { createBudgetAlertClaims } from '../store/budget-alert-claims.js';
import { periodsOf } from '../store/ledger-periods.js';
import { createOutbox, type NewOutboxEntry } from '../store/watch-outbox.js';
import type { AlertedBudget, BudgetWatch } from './budget-watch.js';
import { startDrains } from './drain-outbox.js';
import { nowOf, type WatchDeps } from './watch-deps.js';

// Budget alerts (a job scheduler beside the looks): each budget's month against its thresholds — a
// share of the budget spent (`alert_at`) and the forecast past the budget (`forecast_alert`). A
// threshold crossed is claimed once per budget and month in Redis, then said through the outboxes: in
// the budget's channel with a chart of the month in its thread, and in a DM to each owner.

/** The thresholds a budget's month has reached, lowest first. */
export function reachedThresholds(budget: AlertedBudget, status: BudgetFigures): BudgetThreshold[] {
  const out: BudgetThreshold[] = [];
  if (status.monthlyUsd <= 0) return out;
  for (const p of [...new Set(budget.alertAt)].sort((a, b) => a - b)) {
    if (status.actualUsd >= (status.monthlyUsd * p) / 100) out.push(`actual-${p}`);
  }
  if (budget.forecastAlert && status.forecastUsd > status.monthlyUsd) out.push('forecast-100');
  return out;
}

export async function checkBudgetAlerts(deps: WatchDeps): Promise<string> {
  const watch = deps.budgets;
  if (!watch) return 'no budgets';
  const now = nowOf(deps);
  const claims = createBudgetAlertClaims(deps.store);
  const said: string[] = [];
  for (const { budget, status } of await watch.months(now)) {
    const crossed: BudgetThreshold[] = [];
    for (const t of reachedThresholds(budget, status)) {
      if (await claims.claim(budget.name, status.month, t)) crossed.push(t);
    }
    if (crossed.length === 0) continue;
    try {
      await sayAlert(deps, watch, budget, status, crossed, now);
      said.push(`${budget.name}: ${crossed.join(', ')}`);
    } catch (err) {
      // Not queued: the claims go back so the next look says it, and the failure is counted.
      for (const t of crossed) await claims.release(budget.name, status.month, t);
      deps.countBudgetAlertFailed?.('queue');
      deps.log.warn({ err, budget: budget.name }, 'a budget alert could not be queued');
    }
  }
  return said.length === 0 ? 'no budget crossed a new threshold' : said.join('; ');
}

async function sayAlert(
  deps: WatchDeps,
  watch: BudgetWatch,
  budget: AlertedBudget,
  status: BudgetFigures,
  crossed: readonly BudgetThreshold[],
  now: number,
): Promise<void> {
  const today = periodsOf(now, deps.policy.digest.tz).day;
  const days = monthDays(status.month);
  const rows = await watch.rows({
    from: days[0]!,
    to: days.at(-1)!,
    ...(budget.projects.length > 0 ? { projects: budget.projects } : {}),
  });
  const report = spendReport(rows, days);
  // Owners by their Slack id; machines made elsewhere under a few words (spend-report.ts NO_OWNER).
  const top = report.byOwner.map((s) => ({ who: s.key, usd: s.usd }));
  const ref = `budget-${status.month}-${budget.name}-${crossed.join('-')}`;
  const outbox = createOutbox(deps.store);
  const message = budgetAlertMessage({ budget: status, crossed, top, channel: budget.channel });
  const entries: NewOutboxEntry[] = [{ op: 'message', mode: 'post', ref, ...message, tag: 'budget-alert' }];
  if (watch.fonts) {
    const spec = budgetChartSpec({
      name: status.name,
      monthlyUsd: status.monthlyUsd,
      forecastUsd: status.forecastUsd,
      monthDays: days,
      byDay: report.byDay.filter((d) => d.day <= today),
    });
    const { renderChartPng } = await import('../render/render-chart-png.js');
    const blob = await outbox.putBlob(renderChartPng(spec, watch.fonts));
    entries.push({
      op: 'file',
      blob,
      filename: `budget-${budget.name}-${status.month}.png`,
      title: spec.title,
      alt: `${spec.title}: ${message.text}`.slice(0, 990),
      thread: ref,
      tag: 'budget-alert',
    });
  }
  // The chart goes in the channel's thread; without a channel, in each owner's DM.
  const started: Array<{ target: string; token: string }> = [];
  const push = async (target: string, list: readonly NewOutboxEntry[]) => {
    const token = await outbox.push(target, list);
    if (token) started.push({ target, token });
  };
  if (budget.channel) await push(budget.channel, entries);
  for (const owner of budget.owners) await push(owner, budget.channel ? entries.slice(0, 1) : entries);
  if (started.length > 0) await startDrains(deps, started);
}
