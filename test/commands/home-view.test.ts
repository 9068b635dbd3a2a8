import { describe, expect, it } from 'vitest';
import { HOME_ACTION_PREFIX, readHomeButton } from '../../src/commands/home/home-buttons.js';
import type { HomeData, HomeMachine, HomeSchedule } from '../../src/commands/home/home-data.js';
import { homeView, MAX_HOME_BLOCKS } from '../../src/commands/home/home-view.js';
import { MACHINES_SHOWN } from '../../src/commands/home/machines-section.js';
import type { GpuCommand } from '../../src/commands/registry.js';
import { checkView } from '../../src/devkit/block-kit-limits.js';
import type { ApprovalRequest } from '../../src/store/approval-record.js';

// The Home tab's renderers on plain data: what a person sees for a few machines and for a fleet far
// larger than a view may hold (Slack rejects a view of more than 100 blocks).

const NOW = Date.parse('2026-11-26T12:00:00Z');
const PROJECT = '7b0c1e2a-1111-4222-8333-944455556666';

const machine = (i: number, state: string): HomeMachine => ({
  id: `i-${i}`,
  name: `train-${String(i).padStart(4, '0')}`,
  channelId: 'C0GPU',
  projectId: PROJECT,
  state,
  type: 'h100-hgx-80gb.8x',
  runningSince: NOW - 3 * 3600_000,
});

const approval = (i: number): ApprovalRequest<GpuCommand> =>
  ({
    id: `a-${i}`,
    command: { kind: 'start', instance: `train-${i}` },
    kind: 'start',
    requester: 'U0ADA',
    ctx: { teamId: 'T0', channelId: 'C0GPU', userId: 'U0ADA', requestedAt: NOW },
    reasons: ['costs more than $10/h'],
    expiresAt: NOW + 3600_000,
    approvalChannel: 'C0APPROVE',
  }) as unknown as ApprovalRequest<GpuCommand>;

const schedule = (i: number): HomeSchedule => ({
  id: `s-${i}`,
  action: i % 2 === 0 ? 'stop' : 'start',
  target: `train-${i}`,
  when: 'every weekday at 19:00',
  channel: 'C0GPU',
});

function data(overrides: Partial<HomeData>): HomeData {
  return {
    userId: 'U0ADA',
    now: NOW,
    machines: [],
    waitlist: [],
    schedules: [],
    spend: { days: [], projects: [], unpriced: false },
    forms: [{ form: 'create', label: 'Create a machine…' }],
    ...overrides,
  };
}

const all = (view: { blocks: unknown[] }) => JSON.stringify(view.blocks);

describe('the Home view', () => {
  it('shows each machine with its state, uptime and buttons that run the command in its channel', () => {
    const view = homeView(data({ machines: [machine(1, 'running'), machine(2, 'stopped')] }));
    const text = all(view);
    expect(text).toContain('*train-0001* · *running*');
    expect(text).toContain('up 3h');
    const buttons = (
      view.blocks as Array<{
        type: string;
        elements?: Array<{ action_id: string; value: string; text: { text: string } }>;
      }>
    )
      .filter((b) => b.type === 'actions')
      .flatMap((b) => b.elements ?? [])
      .filter((e) => e.action_id.startsWith(HOME_ACTION_PREFIX));
    // Running: Stop and Metrics; stopped: Start and Metrics.
    expect(buttons.map((b) => b.text.text)).toEqual(['Stop', 'Metrics', 'Start', 'Metrics']);
    expect(readHomeButton(buttons[0]!.action_id, buttons[0]!.value)).toEqual({
      run: 'stop',
      value: { t: 'stop train-0001', c: 'C0GPU', p: PROJECT },
    });
    expect(checkView(view)).toEqual([]);
  });

  it('says when a machine is in a state gpuops does not know, instead of counting it as not running', () => {
    const view = homeView(data({ machines: [{ id: 'i-9', name: 'lab', channelId: 'C0GPU' }] }));
    const text = all(view);
    expect(text).toContain('state unknown: gpuops could not read it from the cloud just now');
    expect(text).toContain('1 made through gpuops, state unknown');
    expect(text).not.toContain('0 running');
    const labels = (view.blocks as Array<{ type: string; elements?: Array<{ text: { text: string } }> }>)
      .filter((b) => b.type === 'actions')
      .flatMap((b) => b.elements ?? [])
      .map((e) => e.text.text);
    // Neither Start nor Stop: either may be the wrong one.
    expect(labels).not.toContain('Start');
    expect(labels).not.toContain('Stop');
    expect(labels).toContain('Metrics');
    const mixed = all(
      homeView(data({ machines: [machine(1, 'running'), { id: 'i-9', name: 'lab', channelId: 'C0GPU' }] })),
    );
    expect(mixed).toContain('2 made through gpuops, 1 running, 1 in a state unknown');
  });

  it('lists schedules with a Remove that runs /gpu schedule rm in their channel', () => {
    const view = homeView(data({ schedules: [schedule(1)] }));
    const section = (view.blocks as Array<{ accessory?: { action_id: string; value: string } }>).find((b) =>
      JSON.stringify(b).includes('s-1'),
    )!;
    expect(all(view)).toContain('start *train-1* · every weekday at 19:00');
    expect(readHomeButton(section.accessory!.action_id, section.accessory!.value)).toEqual({
      run: 'schedule-rm',
      value: { t: 'schedule rm s-1', c: 'C0GPU' },
    });
  });

  it('stays within 100 blocks for a huge fleet, and points to /gpu ls for the rest', () => {
    const machines = Array.from({ length: 5000 }, (_, i) => machine(i, i % 3 === 0 ? 'running' : 'stopped'));
    const view = homeView(
      data({
        machines,
        approvals: Array.from({ length: 300 }, (_, i) => approval(i)),
        waitlist: Array.from({ length: 200 }, (_, i) => ({
          id: `w-${String(i).padStart(4, '0')}`,
          channelId: 'C0GPU',
          projectId: PROJECT,
          type: 'h100-hgx-80gb.8x',
          count: 1,
          by: 'U0ADA',
          createdAt: NOW,
        })),
        schedules: Array.from({ length: 200 }, (_, i) => schedule(i)),
        notice: 'Something happened.',
        spend: {
          days: [
            { day: '2026-11-23', at: NOW, userUsd: 10, userGpuHours: 4, projectUsd: 20, projectGpuHours: 8 },
          ],
          projects: [{ projectId: PROJECT, usd: 20, gpuHours: 8 }],
          unpriced: false,
          chartFileId: 'F123',
        },
      }),
    );
    expect(view.blocks.length).toBeLessThanOrEqual(MAX_HOME_BLOCKS);
    expect(checkView(view)).toEqual([]);
    const text = all(view);
    expect(text).toContain(`…and ${5000 - MACHINES_SHOWN} more`);
    expect(text).toContain('`/gpu ls`');
    expect(text).toContain('`/gpu approvals`');
    // Running machines first: they are the ones that cost.
    expect(text.indexOf('*running*')).toBeLessThan(
      text.indexOf('*stopped*') === -1 ? Infinity : text.indexOf('*stopped*'),
    );
    // Every section is still there, last ones included.
    expect(text).toContain('*Your schedules*');
    expect(text).toContain('"slack_file":{"id":"F123"}');
  });
});

describe('times on the Home tab', () => {
  it('are Slack dates the reader sees in their own zone, with a plain UTC fallback', () => {
    const view = homeView(data({ machines: [{ ...machine(1, 'running'), leaseEndsAt: NOW + 3600_000 }] }));
    const text = all(view);
    expect(text).toContain('Updated <!date^1795694400^{date_short_pretty} {time}|2026-11-26 12:00 UTC>');
    expect(text).toContain('lease ends <!date^1795698000^{date_short_pretty} {time}|2026-11-26 13:00 UTC>');
    // No raw ISO time anywhere a person reads.
    expect(text).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d/);
  });
});

describe('the Home tab: budgets', () => {
  const budget = (i: number) =>
    ({
      name: `team-${i}`,
      monthlyUsd: 40_000,
      actualUsd: 12_000 + i,
      forecastUsd: 41_200,
      state: 'forecast_over',
      month: '2026-11',
    }) as const;

  it("shows the person's budgets as gauges beside the spend, and nothing when they have none", () => {
    const text = all(homeView(data({ budgets: [budget(1)] })));
    expect(text).toContain('*Your budgets* (2026-11)');
    expect(text).toContain(
      '*team-1* `▰▰▰▱▱▱▱▱▱▱` $12,001.00 of $40,000.00 (30 %) · forecast $41,200.00 (103 %)',
    );
    expect(all(homeView(data({ budgets: [] })))).not.toContain('Your budgets');
  });

  it('caps the gauges, and stays a view Slack accepts with a large fleet', () => {
    const many = Array.from({ length: 40 }, (_, i) => budget(i));
    const view = homeView(
      data({ budgets: many, machines: Array.from({ length: 300 }, (_, i) => machine(i, 'running')) }),
    );
    expect(all(view)).toContain('_and 30 more: `/gpu budget` lists them all_');
    expect(view.blocks.length).toBeLessThanOrEqual(MAX_HOME_BLOCKS);
    expect(checkView(view)).toEqual([]);
  });
});
