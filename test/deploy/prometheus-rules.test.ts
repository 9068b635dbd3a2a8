import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ensureBinary } from '../../src/sys/ensure-binary.js';
import { exportedSeries, selectedNames } from '../support/promql-names.js';

// The alerting and recording rules gpuops ships (deploy/prometheus/) are valid for Prometheus
// (`promtool check rules`), each alert fires and clears on synthetic series (`promtool test rules`),
// every series they read is one the bot exports, and every alert has its runbook in docs/operations.md.

const run = promisify(execFile);
const dir = fileURLToPath(new URL('../../deploy/prometheus/', import.meta.url));
const RULES = join(dir, 'gpuops.rules.yaml');
const testFiles = readdirSync(join(dir, 'tests'))
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => join(dir, 'tests', f));

interface Rule {
  readonly alert?: string;
  readonly record?: string;
  readonly expr: string;
  readonly annotations?: Record<string, string>;
}
const rules: Rule[] = (parse(readFileSync(RULES, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap(
  (g) => g.rules,
);
const alerts = rules.filter((r) => r.alert).map((r) => r as Rule & { alert: string });

let promtool: string;
beforeAll(async () => {
  // Debian's prometheus package ships promtool; installed as root when missing, as CI does.
  promtool = await ensureBinary('promtool', {
    debianPackage: 'prometheus',
    install: true,
    otherwise: 'install Prometheus 2.x and put promtool on PATH',
  });
}, 300_000);

const promtoolRun = (args: string[], cwd: string) =>
  run(promtool, args, { cwd }).then(
    ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
    (err: { code?: number; stdout?: string; stderr?: string }) => ({
      code: err.code ?? 1,
      output: `${err.stdout ?? ''}${err.stderr ?? ''}`,
    }),
  );

describe('deploy/prometheus: the rules gpuops ships', () => {
  it('pass promtool check rules', async () => {
    const { code, output } = await promtoolRun(['check', 'rules', RULES], dir);
    expect(output).toContain('SUCCESS');
    expect(code).toBe(0);
  });

  it('pass their unit tests: every alert fires and clears on synthetic series', async () => {
    const { code, output } = await promtoolRun(['test', 'rules', ...testFiles], dir);
    expect(output, output).not.toContain('FAILED');
    expect(code, output).toBe(0);
  });

  it('test every alert both firing and, later, cleared', () => {
    const seen = new Map<string, { fired: number[]; clear: number[] }>();
    const minutes = (t: string) => Number(/^(\d+)m$/.exec(t)?.[1] ?? Number.NaN);
    for (const file of testFiles) {
      const doc = parse(readFileSync(file, 'utf8')) as {
        tests: { alert_rule_test?: { eval_time: string; alertname: string; exp_alerts: unknown[] }[] }[];
      };
      for (const t of doc.tests.flatMap((x) => x.alert_rule_test ?? [])) {
        const entry = seen.get(t.alertname) ?? { fired: [], clear: [] };
        (t.exp_alerts.length > 0 ? entry.fired : entry.clear).push(minutes(t.eval_time));
        seen.set(t.alertname, entry);
      }
    }
    for (const { alert } of alerts) {
      const entry = seen.get(alert);
      expect(entry?.fired.length, `${alert} is never seen firing`).toBeGreaterThan(0);
      const firstFired = Math.min(...(entry?.fired ?? []));
      expect(
        entry?.clear.some((t) => t > firstFired),
        `${alert} is never seen clearing after it fired`,
      ).toBe(true);
    }
  });

  it('fail their unit tests when a rule is wrong (the tests really check)', async () => {
    const copy = mkdtempSync(join(tmpdir(), 'gpuops-rules-'));
    try {
      cpSync(join(dir, 'tests'), join(copy, 'tests'), { recursive: true });
      // Degraded mode no longer noticed: its test must fail, naming the alert.
      writeFileSync(
        join(copy, 'gpuops.rules.yaml'),
        readFileSync(RULES, 'utf8').replace(
          'max by (namespace) (gpuops_degraded_mode) == 1',
          'max by (namespace) (gpuops_degraded_mode) == 2',
        ),
      );
      const files = readdirSync(join(copy, 'tests')).map((f) => join(copy, 'tests', f));
      const { code, output } = await promtoolRun(['test', 'rules', ...files], copy);
      expect(code).not.toBe(0);
      expect(output).toMatch(/FAILED[\s\S]*GpuopsDegradedMode/);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it('read only series the bot exports (or their own recordings, or up)', async () => {
    const exported = await exportedSeries();
    const recorded = new Set(rules.flatMap((r) => (r.record ? [r.record] : [])));
    const unknown = rules
      .flatMap((r) => selectedNames(r.expr).map((name) => ({ rule: r.alert ?? r.record, name })))
      .filter(({ name }) => !exported.has(name) && !recorded.has(name) && name !== 'up');
    expect(unknown).toEqual([]);
  });

  it('give every alert a runbook entry in docs/operations.md', () => {
    const doc = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
    const headings = new Set([...doc.matchAll(/^#### (Gpuops\w+)$/gm)].map((m) => m[1]));
    for (const { alert, annotations } of alerts) {
      expect(headings.has(alert), `docs/operations.md has no "#### ${alert}"`).toBe(true);
      expect(annotations?.runbook).toBe(`docs/operations.md#${alert.toLowerCase()}`);
    }
    // And no runbook for an alert that is not shipped.
    expect([...headings].filter((h) => !alerts.some((a) => a.alert === h))).toEqual([]);
  });
});
