import { randomBytes } from 'node:crypto';
import { FakeSlackApi } from '../src/devkit/fake-slack-api.js';
import { startSim } from '../src/sim/start-sim.js';
import { startPrivateRedis } from '../src/sys/private-redis.js';
import { type GpuopsProcess, spawnGpuops } from '../test/support/gpuops-process.js';
import type { BenchResult } from './run.js';
import { BOT_TOKEN } from './support/e2e-driver.js';
import { gpuopsEnvFor } from './support/e2e-world.js';
import { lsLoad, runLoad } from './support/run-load.js';
import { latencySummary, round } from './support/stats.js';
import { stopGently } from './support/stop-gently.js';

// Scenario 1b, what WAIT costs the acknowledgement (issue 17): the ack scenario's signed `/gpu ls` on a
// primary with one replica, to two `gpuops web` processes on that same pair, in the same run: one that
// acknowledges once the job is on the primary (REDIS_WAIT_REPLICAS=0), one that waits until the
// replica has it too (REDIS_WAIT_REPLICAS=1, the default with Sentinel or Cluster). Interleaved rounds.

export async function run(): Promise<BenchResult> {
  const count = Number(process.env.BENCH_ACK_COUNT ?? 2_000);
  const concurrency = 50;
  const warmup = 300;
  const rounds = Number(process.env.BENCH_ACK_ROUNDS ?? 3);
  const primary = await startPrivateRedis({ appendOnly: false });
  const replica = await startPrivateRedis({ extraArgs: ['--replicaof', '127.0.0.1', String(primary.port)] });
  const sim = await startSim({ shape: 'B', port: 0, metrics: false, transitionMs: 0, log: () => {} });
  const slack = await FakeSlackApi.start({ tokens: [BOT_TOKEN], teamId: 'T0BENCH' });
  const children: GpuopsProcess[] = [];
  try {
    const web = (replicas: string) => {
      const child = spawnGpuops(['web'], {
        ...gpuopsEnvFor(sim.info, slack.apiUrl, primary.url),
        REDIS_WAIT_REPLICAS: replicas,
      });
      children.push(child);
      return child;
    };
    const [plain, waiting] = [web('0'), web('1')];
    const [plainReady, waitingReady] = await Promise.all([
      plain.waitForLog((r) => r.msg === 'gpuops ready', 30_000),
      waiting.waitForLog((r) => r.msg === 'gpuops ready', 30_000),
    ]);
    const tag = randomBytes(3).toString('hex');
    const load = (port: unknown, userPrefix: string) =>
      runLoad(lsLoad(port, userPrefix, { count, concurrency, warmup }));
    const rows: Array<Record<string, string | number>> = [];
    const p50 = { plain: [] as number[], waiting: [] as number[] };
    const p99 = { plain: [] as number[], waiting: [] as number[] };
    for (let r = 0; r < rounds; r++) {
      for (const [which, ready] of [
        ['plain', plainReady],
        ['waiting', waitingReady],
      ] as const) {
        const report = await load(ready.port, `U${which[0]}${r}x${tag}x`);
        if (!report.samples.every((s) => s.includes('Looking that up')))
          throw new Error(`gpuops did not queue the lookups (it answered: ${report.samples[0]})`);
        const ok = report.latenciesMs.filter((v) => Number.isFinite(v));
        const summary = latencySummary(ok);
        p50[which].push(summary.p50_ms);
        p99[which].push(summary.p99_ms);
        rows.push({
          case: `${which === 'plain' ? 'no WAIT (REDIS_WAIT_REPLICAS=0)' : 'WAIT 1 replica (REDIS_WAIT_REPLICAS=1)'}, round ${r + 1}`,
          requests: report.latenciesMs.length,
          per_s: round((report.latenciesMs.length / report.elapsedMs) * 1000, 0),
          ...summary,
          non_200: report.latenciesMs.length - (report.statuses['200'] ?? 0),
        });
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    return {
      name: 'ack-wait',
      description: `Signed /gpu ls on a primary and a replica, ${count} requests at concurrency ${concurrency} (after ${warmup} warm-up) per round, ${rounds} interleaved rounds, with and without WAIT`,
      rows,
      summary: {
        no_wait_p50_ms: median(p50.plain),
        wait_p50_ms: median(p50.waiting),
        no_wait_p99_ms: median(p99.plain),
        wait_p99_ms: median(p99.waiting),
        wait_adds_p50_ms: round(median(p50.waiting) - median(p50.plain)),
        wait_adds_p99_ms: round(median(p99.waiting) - median(p99.plain)),
      },
    };
  } finally {
    await Promise.all(children.map((c) => stopGently(c)));
    await slack.close();
    await sim.close();
    await replica.close();
    await primary.close();
  }
}
