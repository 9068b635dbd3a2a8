import type { KnownBlock } from '@slack/types';
import { formatUsd } from '../../pricing/cost.js';
import type { ChartSpec } from '../../render/chart-spec.js';
import { escapeText } from '../../render/job-message.js';
import type { HomeSpend } from './home-data.js';

// "This week": spend and GPU-hours of this person's machines and of their projects, from the
// watchers' spend ledger (estimates: docs/home.md says what they leave out), and a small PNG of the days.

const DAY_MS = 86_400_000;

const hours = (h: number) => `${h < 10 ? h.toFixed(1) : Math.round(h)} GPU-hours`;

export function spendTotals(spend: HomeSpend): { userUsd: number; userGpuHours: number } {
  return {
    userUsd: spend.days.reduce((a, d) => a + d.userUsd, 0),
    userGpuHours: spend.days.reduce((a, d) => a + d.userGpuHours, 0),
  };
}

/** The chart of the week's days: GPU-hours a day of this person's machines and of their projects. */
export function spendChartSpec(spend: HomeSpend): ChartSpec {
  const first = spend.days[0]?.at ?? 0;
  const last = spend.days.at(-1)?.at ?? first;
  const point = (at: number, v: number) => ({ t: at + DAY_MS / 2, v });
  return {
    title: 'GPU-hours a day this week',
    unit: 'GPU-h',
    start: first,
    end: last + DAY_MS,
    stepMs: DAY_MS,
    min: 0,
    width: 640,
    height: 300,
    series: [
      { label: 'your machines', points: spend.days.map((d) => point(d.at, d.userGpuHours)) },
      { label: 'your projects', points: spend.days.map((d) => point(d.at, d.projectGpuHours)) },
    ],
  };
}

export function spendSection(spend: HomeSpend): KnownBlock[] {
  const { userUsd, userGpuHours } = spendTotals(spend);
  const since = spend.days[0]?.day ?? '';
  const projects = spend.projects
    .slice(0, 10)
    .map((p) => `• ${escapeText(p.name ?? p.projectId)}: ${formatUsd(p.usd)} · ${hours(p.gpuHours)}`);
  const text =
    `*This week* (since ${since})\n` +
    `Your machines: *${formatUsd(userUsd)}* · ${hours(userGpuHours)}` +
    (spend.unpriced ? ' (some without a known price)' : '') +
    (projects.length > 0 ? `\nYour projects, all machines:\n${projects.join('\n')}` : '');
  const blocks: KnownBlock[] = [{ type: 'section', text: { type: 'mrkdwn', text } }];
  if (spend.chartFileId) {
    blocks.push({
      type: 'image',
      slack_file: { id: spend.chartFileId },
      alt_text: `GPU-hours a day this week: ${spend.days.map((d) => `${d.day} ${d.userGpuHours.toFixed(1)}`).join(', ')}`,
    });
  }
  blocks.push({
    type: 'context',
    elements: [
      {
        type: 'mrkdwn',
        text: 'Estimates from what gpuops saw running in the projects it acts on, watched or not, and the cached price list: not an invoice.',
      },
    ],
  });
  return blocks;
}
