import type { WebClient } from '@slack/web-api';
import { formatUsd } from '../../pricing/cost.js';
import { clip } from '../../render/job-message.js';
import { spendChartSpec } from '../../render/spend-chart.js';
import { periodsOf } from '../../store/ledger-periods.js';
import type { Handlers } from '../kit/handler.js';
import { PermanentJobError } from '../kit/job-errors.js';
import type { JobRun, Outcome } from '../kit/job-run.js';
import type { MoneyPort } from '../kit/money-port.js';
import type { CommandOf } from '../registry.js';
import { budgetBlocks, filterWords, spendBlocks, spendHeadline } from './render.js';
import { periodDays } from './spend-period.js';
import { nameFilter, type SpendFilter, type SpendLine, spendReport } from './spend-report.js';

// `/gpu spend`: the ledger's rows of the period summed (spend-report.ts), the figures in the job's
// message and the chart of the days uploaded in its thread. `/gpu budget`: each budget's month.

export const MONEY_NOT_KEPT =
  'Spend is not counted on this deployment: the spend ledger runs with the watchers (docs/budgets.md).';

function requireMoney(run: JobRun): MoneyPort {
  if (!run.deps.money) throw new PermanentJobError(MONEY_NOT_KEPT);
  return run.deps.money;
}

const listed = (names: Iterable<string>) =>
  [...new Set(names)]
    .filter((n) => n !== '')
    .sort()
    .slice(0, 8)
    .join(', ');

function filterOf(
  word: string | undefined,
  rows: readonly SpendLine[],
  label: string,
): SpendFilter | undefined {
  if (word === undefined) return undefined;
  if (word.startsWith('@')) return { by: 'person', user: word.slice(1) };
  const filter = nameFilter(word, rows);
  if (filter) return filter;
  const projects = listed(rows.map((r) => r.project));
  const types = listed(rows.map((r) => r.type));
  throw new PermanentJobError(
    rows.length === 0
      ? `Nothing was spent in ${label}, so \`${word}\` names no project or instance type with spend: try \`/gpu spend ${word} last month\`, or \`/gpu spend\` for everything.`
      : `\`${word}\` is neither a project nor an instance type with spend in ${label} (projects: ${projects}; types: ${types}): check the spelling, or name a person as @person.`,
  );
}

type UploadProgress = { uploaded: boolean };

export async function showSpend(run: JobRun, command: CommandOf<'spend'>): Promise<Outcome> {
  const money = requireMoney(run);
  const period = periodDays(command.period, periodsOf(run.now(), money.tz));
  const rows = await money.rows({ from: period.from, to: period.to });
  const filter = filterOf(command.filter, rows, period.label);
  const report = spendReport(rows, period.days, filter);
  if (report.totalHours === 0) {
    return {
      detail: `No spend counted for ${filterWords(filter)} in ${period.label}: gpuops saw no machine running there in that time.`,
    };
  }
  const headline = spendHeadline(report, filter, period.label);
  if (!money.fonts) {
    return {
      detail: headline,
      result: spendBlocks(report, filter, period.label, 'No chart: the bot has no fonts to draw it with.'),
    };
  }
  const ref = run.data.message ?? (await run.deps.store.jobMessage(run.job.id!));
  const note = `The chart of the dollars of each day is ${ref ? 'in the thread' : 'below'}.`;
  if (!run.progress<UploadProgress>().uploaded) {
    const spec = spendChartSpec(`Spend a day · ${headline.replace(/<@([A-Z0-9]+)>/g, '$1')}`, report.byDay);
    // resvg is native and loaded on the first chart only, as for /gpu metrics.
    const { renderChartPng } = await import('../../render/render-chart-png.js');
    const slack: WebClient = run.deps.slack;
    const where = ref
      ? { channel_id: ref.channel, thread_ts: ref.ts }
      : { channel_id: run.data.ctx.channelId };
    const days = report.byDay.map((d) => `${d.day} ${formatUsd(d.usd)}`).join(', ');
    await slack.files.uploadV2({
      ...where,
      file: renderChartPng(spec, money.fonts),
      filename: `spend-${period.from}-${period.to}.png`,
      title: clip(spec.title, 250),
      alt_text: clip(`${spec.title}: ${days}`, 990),
    });
    await run.saveProgress({ uploaded: true });
  }
  return { detail: headline, result: spendBlocks(report, filter, period.label, note) };
}

export async function showBudgets(run: JobRun, _command: CommandOf<'budget'>): Promise<Outcome> {
  const budgets = await requireMoney(run).budgets();
  const detail =
    budgets.length === 0
      ? 'No budgets are set.'
      : `${budgets.length} budget${budgets.length === 1 ? '' : 's'}: ${budgets.map((b) => `${b.name} ${formatUsd(b.actualUsd)} of ${formatUsd(b.monthlyUsd)}`).join(', ')}`;
  return { detail: clip(detail, 2900), result: budgetBlocks(budgets) };
}

export const handlers = { spend: showSpend, budget: showBudgets } satisfies Handlers;
