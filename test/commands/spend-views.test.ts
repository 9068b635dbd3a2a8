import { describe, expect, it } from 'vitest';
import { periodDays } from '../../src/commands/budgets/spend-period.js';
import { spendReport } from '../../src/commands/budgets/spend-report.js';
import { parseCommand } from '../../src/commands/parse-command.js';
import { budgetGaugeLine, gaugeBar } from '../../src/render/budget-gauge.js';
import { budgetChartSpec, spendChartSpec } from '../../src/render/spend-chart.js';
import { periodsOf } from '../../src/store/ledger-periods.js';

// `/gpu spend` and `/gpu budget` as pure parts: the grammar's refusals, the periods, the sums and the
// gauges. The end-to-end tests (test/e2e/spend.test.ts) run them through the bot against the ledger.

function refusal(text: string): string {
  const result = parseCommand(text);
  if (result.ok) throw new Error(`expected "${text}" to fail`);
  return result.error.message;
}

const row = (day: string, project: string, owner: string | undefined, type: string, usd: number) => ({
  day,
  project,
  instance: `${project}-${owner ?? 'x'}-${type}`,
  ...(owner ? { owner } : {}),
  type,
  hours: usd / 2,
  usd,
});

describe('/gpu spend: the grammar', () => {
  it('refuses a period it does not know in one sentence that lists the three there are', () => {
    for (const text of [
      'spend next month',
      'spend research last year',
      'spend this quarter',
      'spend yesterday month',
    ]) {
      expect(refusal(text)).toMatch(
        /is not a period `\/gpu spend` knows: use `this month` \(the default\), `last month` or `this week`\.$/,
      );
    }
  });

  it('refuses two filters, and a person typed as a name rather than picked from Slack', () => {
    expect(refusal('spend research h100 this week')).toContain(
      'is more than `/gpu spend` takes: name one project, @person or instance type, then the period',
    );
    expect(refusal('spend @ada')).toContain(
      "is not a Slack mention gpuops can read: pick the person from Slack's @ list",
    );
  });
});

describe('spend periods', () => {
  const now = Date.parse('2026-11-18T10:00:00Z'); // a Wednesday
  it('reads this month so far, last month whole, and this week from Monday', () => {
    expect(periodDays('this month', periodsOf(now, 'UTC'))).toMatchObject({
      from: '2026-11-01',
      to: '2026-11-18',
      label: 'November 2026',
    });
    const last = periodDays('last month', periodsOf(now, 'UTC'));
    expect(last).toMatchObject({ from: '2026-10-01', to: '2026-10-31', label: 'October 2026' });
    expect(last.days).toHaveLength(31);
    expect(periodDays('this week', periodsOf(now, 'UTC'))).toMatchObject({
      from: '2026-11-16',
      to: '2026-11-18',
    });
  });

  it('names the days in the bot time zone: late evening in New York is still the 30th there', () => {
    const evening = Date.parse('2026-12-01T03:00:00Z');
    expect(periodDays('this month', periodsOf(evening, 'America/New_York')).to).toBe('2026-11-30');
  });
});

describe('the spend report', () => {
  const days = ['2026-11-01', '2026-11-02', '2026-11-03'];
  const rows = [
    row('2026-11-01', 'research', 'U1', 'h100', 100),
    row('2026-11-02', 'research', 'U2', 'a100', 40),
    row('2026-11-03', 'infra', 'U1', 'h100', 60),
    row('2026-11-03', 'infra', undefined, 'cpu', 0.5),
    row('2026-10-31', 'infra', 'U1', 'h100', 999), // outside the period
  ];

  it('totals the period, and the chart of its days adds up to the same total', () => {
    const report = spendReport(rows, days);
    expect(report.totalUsd).toBe(200.5);
    const chart = spendChartSpec('t', report.byDay);
    expect(chart.series[0]!.points.reduce((a, p) => a + p.v, 0)).toBe(report.totalUsd);
    expect(report.byOwner.map((s) => [s.key, s.usd])).toEqual([
      ['U1', 160],
      ['U2', 40],
      ['made outside gpuops', 0.5],
    ]);
    expect(report.byProject[0]).toMatchObject({ key: 'research', usd: 140 });
  });

  it('filters by person, project or type', () => {
    expect(spendReport(rows, days, { by: 'person', user: 'U1' }).totalUsd).toBe(160);
    expect(spendReport(rows, days, { by: 'project', project: 'infra' }).totalUsd).toBe(60.5);
    expect(spendReport(rows, days, { by: 'type', type: 'a100' }).totalUsd).toBe(40);
  });
});

describe('budget gauges and the alert chart', () => {
  const b = {
    name: 'research',
    monthlyUsd: 40_000,
    actualUsd: 12_000,
    forecastUsd: 41_200,
    state: 'forecast_over',
    month: '2026-11',
  } as const;

  it('shows actual against the budget, the forecast and the state in one line', () => {
    expect(gaugeBar(12_000, 40_000)).toBe('▰▰▰▱▱▱▱▱▱▱');
    expect(gaugeBar(90_000, 40_000)).toBe('▰'.repeat(10));
    expect(budgetGaugeLine(b)).toBe(
      ':large_yellow_circle: *research* `▰▰▰▱▱▱▱▱▱▱` $12,000.00 of $40,000.00 (30 %) · forecast $41,200.00 (103 %) · forecast over budget',
    );
  });

  it('draws actual summed by day, a forecast ending at the forecast and a flat budget line', () => {
    const spec = budgetChartSpec({
      ...b,
      monthDays: Array.from({ length: 30 }, (_, i) => `2026-11-${String(i + 1).padStart(2, '0')}`),
      byDay: [
        { day: '2026-11-01', usd: 5_000 },
        { day: '2026-11-02', usd: 7_000 },
      ],
    });
    const [actual, forecast, budget] = spec.series;
    expect(actual!.points.at(-1)!.v).toBe(12_000);
    expect(forecast!.points[0]!.v).toBe(12_000);
    expect(forecast!.points.at(-1)).toEqual({ t: Date.parse('2026-12-01T00:00:00Z'), v: 41_200 });
    expect(new Set(budget!.points.map((p) => p.v))).toEqual(new Set([40_000]));
  });
});
