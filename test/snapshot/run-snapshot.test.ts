import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCommand } from '../../src/commands/parse-command.js';
import { parseRange, runSnapshot } from '../../src/snapshot/run-snapshot.js';
import {
  type MetricsStack,
  startMetricsStack,
  TEST_INSTANCES,
  waitForSeries,
} from '../support/metrics-stack.js';
import { countInk, decodePng, pngHeader } from '../support/png.js';

// `gpuops snapshot` end to end: env → metrics client → gateway → real Prometheus → PNG file and text.

let stack: MetricsStack;
let dir: string;

beforeAll(async () => {
  stack = await startMetricsStack();
  dir = mkdtempSync(join(tmpdir(), 'gpuops-snapshot-test-'));
  // A few scrapes, so the chart has lines rather than single dots.
  await waitForSeries(stack.metrics.prometheusUrl!, 'count_over_time(DCGM_FI_DEV_GPU_UTIL[1m]) >= 6', 10);
});

afterAll(async () => {
  await stack?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function capture() {
  const out = { stdout: '', stderr: '' };
  return {
    out,
    io: {
      stdout: { write: (t: string) => (out.stdout += t) },
      stderr: { write: (t: string) => (out.stderr += t) },
    },
  };
}

describe('gpuops snapshot', () => {
  it('writes the PNG of an instance found by name, and prints its summary', async () => {
    const file = join(dir, 'train-1.png');
    const { out, io } = capture();
    const code = await runSnapshot(
      ['train-1', '--out', file, '--range', '1m'],
      { METRICS_URL: stack.metricsUrl, METRICS_API_KEY: stack.apiKey },
      io,
    );
    expect(out.stderr).toBe('');
    expect(code).toBe(0);
    const png = readFileSync(file);
    expect(pngHeader(png)).toEqual({ width: 1000, height: 560 });
    expect(countInk(decodePng(png).pixels)).toBeGreaterThan(10_000);
    const lines = out.stdout.split('\n');
    expect(lines[0]).toMatch(
      /^train-1 \(3f1c2a9e\) · GPU utilisation \(%\), \d{4}-\d\d-\d\d \d\d:\d\d.* UTC \(1m\)$/,
    );
    const gpuLines = lines.filter((l) => /^GPU \d/.test(l));
    expect(gpuLines).toHaveLength(8);
    for (const line of gpuLines) {
      const mean = Number(/mean (\S+)/.exec(line)![1]);
      expect(mean).toBeGreaterThanOrEqual(70);
      expect(mean).toBeLessThanOrEqual(100);
    }
    expect(out.stdout).toContain(`Wrote ${file} (1000×560 PNG`);
    if (process.env.GPUOPS_KEEP_PNG) {
      const { copyFileSync } = await import('node:fs');
      copyFileSync(file, join(process.env.GPUOPS_KEEP_PNG, 'snapshot.png'));
    }
  });

  it('takes an instance id and OAuth credentials, and shows memory in GiB', async () => {
    const file = join(dir, 'nested', 'idle.png');
    const { out, io } = capture();
    const code = await runSnapshot(
      [TEST_INSTANCES[1]!.id, '--out', file, '--metric', 'memory', '--range', '2m'],
      {
        METRICS_URL: stack.metricsUrl,
        METRICS_CLIENT_ID: stack.clientId,
        METRICS_CLIENT_SECRET: stack.clientSecret,
        METRICS_AUTH_URL: stack.authUrl,
      },
      io,
    );
    expect(out.stderr).toBe('');
    expect(code).toBe(0);
    expect(out.stdout).toContain('idle-notebook (9a7b6c5d) · GPU memory used (GiB)');
    // An idle GPU holds at most 0.5 GiB.
    for (const line of out.stdout.split('\n').filter((l) => /^GPU \d/.test(l))) {
      expect(Number(/max (\S+)/.exec(line)![1])).toBeLessThanOrEqual(0.5);
    }
    expect(pngHeader(readFileSync(file)).width).toBe(1000);
  });

  it('says plainly when no instance has that name', async () => {
    const { out, io } = capture();
    const code = await runSnapshot(
      ['no-such-box', '--out', join(dir, 'x.png')],
      { METRICS_URL: stack.metricsUrl, METRICS_API_KEY: stack.apiKey },
      io,
    );
    expect(code).toBe(1);
    expect(out.stderr).toMatch(
      /^gpuops snapshot: No GPU metrics for an instance named "no-such-box" in .*pass the instance id/,
    );
  });

  it('reports a refused key, missing settings and bad arguments without a stack trace', async () => {
    const refused = capture();
    expect(
      await runSnapshot(
        ['train-1', '--out', join(dir, 'y.png')],
        { METRICS_URL: stack.metricsUrl, METRICS_API_KEY: 'wrong' },
        refused.io,
      ),
    ).toBe(1);
    expect(refused.out.stderr).toContain('refused the credentials');
    expect(refused.out.stderr).not.toContain('    at ');

    const missing = capture();
    expect(await runSnapshot(['train-1', '--out', join(dir, 'z.png')], {}, missing.io)).toBe(1);
    expect(missing.out.stderr).toContain('METRICS_URL: required');

    const bad = capture();
    expect(await runSnapshot(['train-1', '--out', 'a.png', '--metric', 'fan'], {}, bad.io)).toBe(2);
    expect(bad.out.stderr).toContain('--metric must be one of util, memory, power, temp');
    expect(bad.out.stderr).toContain('Usage: gpuops snapshot');
    const noOut = capture();
    expect(await runSnapshot(['train-1'], {}, noOut.io)).toBe(2);
    expect(noOut.out.stderr).toContain('--out <file.png> is required');
  });

  it('takes the ranges /gpu metrics takes, and no longer one', async () => {
    const long = capture();
    expect(await runSnapshot(['train-1', '--out', 'a.png', '--range', '31d'], {}, long.io)).toBe(2);
    expect(long.out.stderr).toContain('--range takes a duration from 1m to 30d (as /gpu metrics does)');
    const metrics = parseCommand('metrics train-1 --range 31d');
    expect(metrics.ok).toBe(false);
    expect(metrics.ok ? '' : metrics.error.message).toContain('from 1m to 30d');
    expect(parseCommand('metrics train-1 --range 30d').ok).toBe(true);
  });

  it('reads ranges the way people write them', () => {
    expect(parseRange('1h')).toBe(3_600_000);
    expect(parseRange('1h30m')).toBe(5_400_000);
    expect(parseRange('15m')).toBe(900_000);
    expect(parseRange('2d')).toBe(172_800_000);
    expect(parseRange('1 hour')).toBeUndefined();
  });
});
