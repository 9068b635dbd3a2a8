import { describe, expect, it } from 'vitest';
import { budgetStatus, monthBounds, runningHoursLeft } from '../../src/budgets/forecast.js';
import type { RunningMachine, SpendQuery, SpendRow, SpendSource } from '../../src/budgets/spend-model.js';
import { parsePolicy } from '../../src/policy/load-policy.js';
import type { Schedule } from '../../src/store/schedules.js';

// The month's forecast of each budget (docs/budgets.md): month to date from the ledger's rows, plus
// what runs now at its price to the month's end, less what power schedules and leases will stop.

const ML = '3c1d0e2f-5a6b-4c7d-8e9f-0a1b2c3d4e5f';
const WEB = '4d2e1f30-6b7c-4d8e-9f00-1b2c3d4e5f60';
const HOUR = 3_600_000;

/** The ledger as plain arrays: the SpendSource contract without Redis. */
function source(rows: SpendRow[], running: RunningMachine[]): SpendSource {
  const within = (p: string, projects?: readonly string[]) => !projects || projects.includes(p);
  return {
    rows: async (q: SpendQuery) =>
      rows.filter((r) => r.day >= q.from && r.day <= q.to && within(r.project, q.projects)),
    running: async (projects) => running.filter((m) => within(m.project, projects)),
  };
}

const policy = parsePolicy(
  [
    'budgets:',
    '  ml:',
    '    monthly_usd: 10000',
    `    projects: [${ML}]`,
    '    owners: [U0ADA]',
    '  all:',
    '    monthly_usd: 5000',
    '    owners: [U0ADA]',
    '',
  ].join('\n'),
  't',
);

const row = (day: string, project: string, usd: number): SpendRow => ({
  day,
  project,
  instance: `i-${day}`,
  type: 'h100-hgx-80gb.8x',
  hours: usd / 23.12,
  usd,
});
const big = (instance: string, project = ML): RunningMachine => ({
  project,
  instance,
  type: 'h100-hgx-80gb.8x',
  usdPerHour: 20,
});

// Tuesday 10 November 2026, 12:00 UTC: 20.5 days (492 hours) to the month's end.
const NOW = Date.parse('2026-11-10T12:00:00Z');

function stopSchedule(instance: string, pattern: string, action: 'stop' | 'start' = 'stop'): Schedule {
  return {
    id: `s-${action}${pattern.length}aaaa`,
    action,
    target: { instance, name: instance },
    when: pattern,
    pattern,
    tz: 'UTC',
    channelId: 'C0GPU',
    projectId: ML,
    ownerId: 'U0ADA',
    createdAt: 1,
  };
}

describe('the budget forecast', () => {
  it('bounds the month in the time zone', () => {
    expect(monthBounds(NOW, 'UTC')).toEqual({
      month: '2026-11',
      start: Date.parse('2026-11-01T00:00:00Z'),
      end: Date.parse('2026-12-01T00:00:00Z'),
    });
    // 23:30 UTC on 30 November is already December in Berlin.
    expect(monthBounds(Date.parse('2026-11-30T23:30:00Z'), 'Europe/Berlin')).toEqual({
      month: '2026-12',
      start: Date.parse('2026-11-30T23:00:00Z'),
      end: Date.parse('2026-12-31T23:00:00Z'),
    });
  });

  it('adds what runs now to the month to date, per budget, and says which is over', async () => {
    const spend = source(
      [row('2026-10-31', ML, 9999), row('2026-11-02', ML, 1000), row('2026-11-09', WEB, 4000)],
      [big('a'), big('b', WEB)],
    );
    const statuses = await budgetStatus(policy, spend, NOW);
    expect(statuses).toEqual([
      // 1,000 this month (October's row is not) + $20/h × 492 h.
      {
        name: 'ml',
        month: '2026-11',
        monthlyUsd: 10000,
        actualUsd: 1000,
        forecastUsd: 10840,
        state: 'forecast_over',
      },
      // Every project: 5,000 spent (the whole amount, not above it) and 2 × $20/h to come.
      {
        name: 'all',
        month: '2026-11',
        monthlyUsd: 5000,
        actualUsd: 5000,
        forecastUsd: 24680,
        state: 'forecast_over',
      },
    ]);
    const quiet = await budgetStatus(policy, source([row('2026-11-02', WEB, 5200)], []), NOW);
    expect(quiet.map((s) => [s.name, s.state])).toEqual([
      ['ml', 'ok'],
      ['all', 'over'],
    ]);
  });

  it('is lowered by a stop schedule, put back by its start, and cut at a lease end', async () => {
    const weeknights = stopSchedule('a', '0 20 * * 1-5');
    const mornings = stopSchedule('a', '0 8 * * 1-5', 'start');
    const end = Date.parse('2026-12-01T00:00:00Z');
    // Stopped at 20:00 today for good: 8 hours.
    expect(runningHoursLeft(big('a'), NOW, end, { schedules: [weeknights], leaseEnds: new Map() })).toBe(8);
    // Working hours from here on: today's 8 h, then 12 h on each of the 14 weekdays left (11–30 Nov).
    expect(
      runningHoursLeft(big('a'), NOW, end, { schedules: [weeknights, mornings], leaseEnds: new Map() }),
    ).toBe(8 + 14 * 12);
    // A lease that ends in 3 hours comes first.
    expect(
      runningHoursLeft(big('a'), NOW, end, {
        schedules: [weeknights],
        leaseEnds: new Map([['a', NOW + 3 * HOUR]]),
      }),
    ).toBe(3);
    // A schedule of another machine, or a paused one, changes nothing.
    const paused = { ...weeknights, paused: { at: 1, reason: 'owner left' } };
    expect(
      runningHoursLeft(big('a'), NOW, end, {
        schedules: [stopSchedule('b', '0 20 * * *'), paused],
        leaseEnds: new Map(),
      }),
    ).toBe(492);

    const [ml] = await budgetStatus(policy, source([], [big('a')]), NOW, {
      schedules: [weeknights],
      leaseEnds: new Map(),
    });
    expect(ml).toMatchObject({ name: 'ml', actualUsd: 0, forecastUsd: 160, state: 'ok' });
  });
});
