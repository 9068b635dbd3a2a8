import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { METRIC_NAMES } from '../../src/obs/bot-metrics.js';
import { exportedSeries, selectedNames } from '../support/promql-names.js';

// The Grafana dashboard gpuops ships (deploy/grafana/gpuops-dashboard.json): every query parses as
// PromQL (with Grafana's interval variables stood in for by a duration), names only series the bot
// exports, and the panels an operator looks for are there.

interface Target {
  readonly expr: string;
  readonly refId: string;
}
interface Panel {
  readonly id: number;
  readonly type: string;
  readonly title: string;
  readonly targets?: Target[];
}
const dashboard = JSON.parse(
  readFileSync(new URL('../../deploy/grafana/gpuops-dashboard.json', import.meta.url), 'utf8'),
) as { uid: string; title: string; panels: Panel[] };
const queries = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, ...t })));
/** Grafana replaces these before the query reaches Prometheus. */
const withIntervals = (expr: string) => expr.replace(/\$__(rate_interval|interval|range)\b/g, '5m');

describe('deploy/grafana: the dashboard gpuops ships', () => {
  it('has a uid, a title and queries in every graph', () => {
    expect(dashboard.uid).toBe('gpuops');
    expect(queries.length).toBeGreaterThan(10);
    for (const p of dashboard.panels.filter((x) => x.type !== 'row')) {
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
    }
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it.each(queries.map((q) => [`${q.panel} ${q.refId}`, q.expr]))('%s parses as PromQL', (_name, expr) => {
    expect(() => selectedNames(withIntervals(expr))).not.toThrow();
  });

  it('notices a query that does not parse (the check is real)', () => {
    expect(() => selectedNames('sum by (name (rate(gpuops_jobs_total[5m]))')).toThrow(/does not parse/);
  });

  it('names only series the bot exports', async () => {
    const exported = await exportedSeries();
    const unknown = queries.flatMap((q) =>
      selectedNames(withIntervals(q.expr))
        .filter((n) => !exported.has(n))
        .map((n) => `${q.panel}: ${n}`),
    );
    expect(unknown).toEqual([]);
  });

  it('shows requests by outcome, job latency by kind, queue depth, Slack and cloud errors, approvals waiting', () => {
    const used = new Set(queries.flatMap((q) => selectedNames(withIntervals(q.expr))));
    for (const name of [
      METRIC_NAMES.commands,
      METRIC_NAMES.jobs,
      `${METRIC_NAMES.jobDuration}_bucket`,
      METRIC_NAMES.queueJobs,
      METRIC_NAMES.slackErrors,
      `${METRIC_NAMES.slackAck}_bucket`,
      METRIC_NAMES.cloudRequests,
      METRIC_NAMES.approvalsWaiting,
      METRIC_NAMES.ready,
      METRIC_NAMES.degradedMode,
    ]) {
      expect(used.has(name), `no panel reads ${name}`).toBe(true);
    }
  });
});
