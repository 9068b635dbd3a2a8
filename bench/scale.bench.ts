import { FakeSlackApi } from '../src/devkit/fake-slack-api.js';
import { startPrivateRedis } from '../src/sys/private-redis.js';
import { type GpuopsProcess, spawnGpuops } from '../test/support/gpuops-process.js';
import type { BenchResult } from './run.js';
import { benchPeople } from './support/bench-people.js';
import { BOT_TOKEN, createInstances, phase } from './support/e2e-driver.js';
import { gpuopsEnvFor, startSimProcess } from './support/e2e-world.js';
import { latencySummary, round } from './support/stats.js';
import { stopGently } from './support/stop-gently.js';
import type { Target } from './support/targets.js';
import { waitForCatalogue } from './support/wait-for-catalogue.js';

// Scenario 6, scale-out: one `gpuops web` and 1, 2 and 4 `gpuops worker` processes on one Redis, the
// end-to-end load of scenario 2 on each, with the CPU each process used, so a reader can tell what one
// more worker buys (on this machine's cores, shared with Redis, the simulator and the driver).

export async function run(options: { lanes?: number; perLane?: number } = {}): Promise<BenchResult> {
  const lanes = options.lanes ?? Number(process.env.BENCH_E2E_LANES ?? 50);
  const perLane = options.perLane ?? Number(process.env.BENCH_SCALE_PER_LANE ?? 20);
  const counts = (process.env.BENCH_SCALE_WORKERS ?? '1,2,4').split(',').map(Number);
  const redisServer = await startPrivateRedis();
  const slack = await FakeSlackApi.start({ tokens: [BOT_TOKEN], users: benchPeople(lanes) });
  const children: GpuopsProcess[] = [];
  const rows: Record<string, string | number>[] = [];
  const perS: number[] = [];
  let failed = 0;
  try {
    const { sim, info } = await startSimProcess();
    children.push(sim);
    const env = gpuopsEnvFor(info, slack.apiUrl, redisServer.url);
    const web = spawnGpuops(['web'], env);
    children.push(web);
    const ready = await web.waitForLog((r) => r.msg === 'gpuops ready', 30_000);
    const url = `http://127.0.0.1:${ready.port}/slack/events`;
    let workers: GpuopsProcess[] = [];
    for (const [i, count] of counts.entries()) {
      while (workers.length < count) {
        const worker = spawnGpuops(['worker'], env);
        children.push(worker);
        workers.push(worker);
        await worker.waitForLog((r) => r.msg === 'gpuops ready', 30_000);
      }
      if (i === 0) {
        await waitForCatalogue(redisServer.url, info.projectId);
        await createInstances(slack, url, info.controlUrl, lanes);
      }
      // Warm-up of the new workers, then the measured load.
      await phase(slack, [web, ...workers], url, `w${count}x`, lanes, 2);
      const r = await phase(slack, [web, ...workers], url, `l${count}x`, lanes, perLane);
      failed += r.failed;
      const per = round((r.latenciesMs.length / r.elapsedMs) * 1000, 1);
      perS.push(per);
      rows.push({
        case: `gpuops web + ${count} worker${count > 1 ? 's' : ''}`,
        commands: r.latenciesMs.length,
        per_s: per,
        vs_one_worker: round(per / perS[0]!),
        ...latencySummary(r.latenciesMs),
        failed: r.failed,
        cpu_ms_per_cmd_web: round(r.cpuMsEach[0]! / r.latenciesMs.length, 2),
        cpu_ms_per_cmd_workers: r.cpuMsEach
          .slice(1)
          .map((c) => round(c / r.latenciesMs.length, 2))
          .join(' / '),
        cpu_ms_per_cmd_total: round(r.cpuMs / r.latenciesMs.length, 2),
      });
    }
    workers = [];
    const last = perS.length - 1;
    const target: Target = {
      name: `6 scale-out: throughput with ${counts[last]} workers vs 1 (×), table of ${counts.join(', ')}`,
      value: round(perS[last]! / perS[0]!),
      target: 'reported',
      met: perS.length === counts.length && failed === 0,
    };
    return {
      name: 'scale',
      description: `One gpuops web and ${counts.join(', ')} gpuops worker processes on one Redis, ${lanes * perLane} /gpu stop|start commands, ${lanes} in flight`,
      rows,
      summary: { failed, ...Object.fromEntries(counts.map((c, i) => [`per_s_${c}_workers`, perS[i]!])) },
      targets: [target],
    };
  } finally {
    await Promise.all(children.map((c) => stopGently(c)));
    await slack.close();
    await redisServer.close();
  }
}
