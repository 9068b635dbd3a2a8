import type { KnownBlock } from '@slack/types';
import { formatUsd } from '../../pricing/cost.js';
import { type BudgetFigures, budgetGaugeLine } from '../../render/budget-gauge.js';
import { clip, escapeText } from '../../render/job-message.js';
import { NO_OWNER, type Spender, type SpendFilter, type SpendReport } from './spend-report.js';

// The answers of `/gpu spend` and `/gpu budget` as Block Kit: pure builders over the report.

const TOP = 5;

const hours = (h: number) => `${h < 10 ? h.toFixed(1) : Math.round(h)} h`;

export function filterWords(filter: SpendFilter | undefined): string {
  if (!filter) return 'all projects';
  if (filter.by === 'person') return `<@${filter.user}>'s machines`;
  if (filter.by === 'project') return `project ${escapeText(filter.project)}`;
  return `instance type ${escapeText(filter.type)}`;
}

function topLines(title: string, spenders: readonly Spender[], show: (key: string) => string): string {
  const lines = spenders
    .slice(0, TOP)
    .map((s) => `• ${show(s.key)}: ${formatUsd(s.usd)} · ${hours(s.hours)}`);
  const more = spenders.length > TOP ? `\n_and ${spenders.length - TOP} more_` : '';
  return `*${title}*\n${lines.join('\n')}${more}`;
}

const person = (key: string) => (key === NO_OWNER ? `_${NO_OWNER}_` : `<@${key}>`);

/** `$1,234.00 for all projects in November 2026`: the headline, in the message and the chart's title. */
export function spendHeadline(report: SpendReport, filter: SpendFilter | undefined, label: string): string {
  return `${formatUsd(report.totalUsd)} for ${filterWords(filter)} in ${label}`;
}

export function spendBlocks(
  report: SpendReport,
  filter: SpendFilter | undefined,
  label: string,
  chartNote: string,
): KnownBlock[] {
  const section = (text: string): KnownBlock => ({
    type: 'section',
    text: { type: 'mrkdwn', text: clip(text) },
  });
  const blocks: KnownBlock[] = [
    section(
      `*Spend*: ${spendHeadline(report, filter, label)} · ${hours(report.totalHours)} of machine time` +
        (report.unpriced > 0 ? ` (${report.unpriced} without a known price count hours, not dollars)` : ''),
    ),
  ];
  if (report.totalHours > 0) {
    const tops: string[] = [];
    if (filter?.by !== 'person') tops.push(topLines('Top owners', report.byOwner, person));
    if (filter?.by !== 'project') tops.push(topLines('Top projects', report.byProject, escapeText));
    if (filter?.by !== 'type') tops.push(topLines('Top instance types', report.byType, escapeText));
    blocks.push(section(tops.join('\n\n')));
  }
  blocks.push({
    type: 'context',
    elements: [
      {
        type: 'mrkdwn',
        text: `${chartNote} Estimates from running time × the price list, counted by gpuops for every project it acts on: not an invoice.`,
      },
    ],
  });
  return blocks;
}

export function budgetBlocks(budgets: readonly BudgetFigures[]): KnownBlock[] {
  if (budgets.length === 0) {
    return [
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: 'No budgets are set. An admin adds them under `budgets:` in the policy file (docs/budgets.md).',
        },
      },
    ];
  }
  const month = budgets[0]!.month;
  return [
    { type: 'section', text: { type: 'mrkdwn', text: `*Budgets* · ${month}` } },
    ...budgets.map(
      (b): KnownBlock => ({ type: 'section', text: { type: 'mrkdwn', text: clip(budgetGaugeLine(b)) } }),
    ),
    {
      type: 'context',
      elements: [
        {
          type: 'mrkdwn',
          text: "The gauge is the month's spend so far; the forecast adds the machines running now until the month's end, less the stops their schedules and leases will make.",
        },
      ],
    },
  ];
}
