import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { FakeSlackApi } from '../src/devkit/fake-slack-api.js';
import { startPrivateRedis } from '../src/sys/private-redis.js';
import type { GpuopsProcess } from '../test/support/gpuops-process.js';
import type { BenchResult } from './run.js';
import { benchPeople } from './support/bench-people.js';
import { type BenchBuild, SOURCE_BUILD } from './support/builds.js';
import { BOT_TOKEN, createInstances, merged, type PhaseResult, phase, SECRET } from './support/e2e-driver.js';
import { gpuopsEnvFor, startSimProcess } from './support/e2e-world.js';
import { latencySummary, round, rssMiB, spread } from './support/stats.js';
import { stopGently } from './support/stop-gently.js';
import { atLeast, atMost } from './support/targets.js';
import { waitForCatalogue } from './support/wait-for-catalogue.js';

// Scenario 2, end to end, and scenario 5, memory. `/gpu stop` and `/gpu start` commands, alternating on
// each of many instances so every one is valid, through `gpuops start` (listener, Redis queue, workers,
// simulator, Slack fake), against two baselines in the same run: a minimal Bolt listener plus a raw
// BullMQ worker making the same cloud calls and the Slack calls gpuops needs at its best
// (bench/support/bolt-bullmq.ts, on a Redis of its own so each side's Redis commands are counted
// alone), and an inline handler that calls the simulator from the listener with no queue
// (bench/support/inline-bolt.ts). Latency is from sending the command to the final chat.update
// (Done/Failed) of its message. The apps and the simulator (transitions of 0 ms) run as child
// processes; the driver and the Slack fake run here. Targets: docs/performance.md, 2 and 5.

export async function run(
  options: {
    lanes?: number;
    perLane?: number;
    sequential?: number;
    rounds?: number;
    /** Which build of gpuops and the baselines (bench/support/builds.ts); default the sources. */
    build?: BenchBuild;
  } = {},
): Promise<BenchResult> {
  const build = options.build ?? SOURCE_BUILD;
  // The production build's figures are targets of their own, named apart (bench/dist.bench.ts).
  const label = (target: string) =>
    build.name === 'dist' ? target.replace(/^(\S+ \S+): /, '$1, production build: ') : target;
  const lanes = options.lanes ?? Number(process.env.BENCH_E2E_LANES ?? 50);
  // Each even (the warm-up's too), so that every instance is running again after a phase (stop, start, …).
  const perLane = options.perLane ?? Number(process.env.BENCH_E2E_PER_LANE ?? 20);
  const sequential = options.sequential ?? Number(process.env.BENCH_E2E_SEQUENTIAL ?? 50);
  const rounds = options.rounds ?? Number(process.env.BENCH_E2E_ROUNDS ?? 3);
  const redisServer = await startPrivateRedis();
  const baseRedisServer = await startPrivateRedis();
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 });
  const baseRedis = new Redis(baseRedisServer.url, { maxRetriesPerRequest: 1 });
  const slack = await FakeSlackApi.start({ tokens: [BOT_TOKEN], users: benchPeople(lanes) });
  const children: GpuopsProcess[] = [];
  try {
    const { sim, info } = await startSimProcess();
    children.push(sim);
    const cloudEnv = {
      SIGNING_SECRET: SECRET,
      SLACK_API_URL: slack.apiUrl,
      SLACK_BOT_TOKEN: BOT_TOKEN,
      CLOUD_API_URL: info.cloudUrl,
      CLOUD_API_TOKEN: info.cloudToken,
      CLOUD_PROJECT_ID: info.projectId,
    };
    const inline = build.script('bench/support/inline-bolt.ts', cloudEnv);
    const base = build.script('bench/support/bolt-bullmq.ts', {
      ...cloudEnv,
      REDIS_URL: baseRedisServer.url,
    });
    const gpuops = build.gpuops(['start'], gpuopsEnvFor(info, slack.apiUrl, redisServer.url));
    children.push(inline, base, gpuops);
    const [inlineReady, baseReady, gpuopsReady] = await Promise.all([
      inline.waitForLog((r) => r.msg === 'ready', 30_000),
      base.waitForLog((r) => r.msg === 'ready', 30_000),
      gpuops.waitForLog((r) => r.msg === 'gpuops ready', 30_000),
    ]);
    const inlineUrl = `http://127.0.0.1:${inlineReady.port}/slack/events`;
    const baseUrl = `http://127.0.0.1:${baseReady.port}/slack/events`;
    const gpuopsUrl = `http://127.0.0.1:${gpuopsReady.port}/slack/events`;
    // Idle: started and connected, nothing asked yet (a moment for start-up garbage to be collected).
    await sleep(2_000);
    const rssOf = async () => ({
      gpuops: await rssMiB(gpuops.child.pid!),
      base: await rssMiB(base.child.pid!),
      inline: await rssMiB(inline.child.pid!),
    });
    const idle = await rssOf();
    await waitForCatalogue(redisServer.url, info.projectId);
    await createInstances(slack, gpuopsUrl, info.controlUrl, lanes);

    // Warm-up (connections, JIT), not measured, the same for each side: four commands per instance
    // under load, then twenty one at a time.
    const sides = [
      { key: 'i', name: 'inline handler', app: inline, url: inlineUrl, redis: undefined },
      { key: 'b', name: 'Bolt + raw BullMQ worker', app: base, url: baseUrl, redis: baseRedis },
      { key: 'g', name: 'gpuops start', app: gpuops, url: gpuopsUrl, redis },
    ] as const;
    for (const side of sides) {
      await phase(slack, side.app, side.url, `w${side.key}`, lanes, 4);
      await phase(slack, side.app, side.url, `v${side.key}`, 1, 20);
    }

    // Interleaved rounds (inline, base, gpuops, inline, …), under load and then one at a time, as the
    // acknowledgement benchmark does: a stretch when the shared machine is slow hits every side alike.
    const load: PhaseResult[][] = sides.map(() => []);
    const one: PhaseResult[][] = sides.map(() => []);
    const harnessBefore = process.cpuUsage();
    for (let r = 0; r < rounds; r++) {
      for (const [i, side] of sides.entries())
        load[i]!.push(await phase(slack, side.app, side.url, `l${side.key}${r}`, lanes, perLane, side.redis));
    }
    const harness = process.cpuUsage(harnessBefore);
    const peak = await rssOf();
    for (let r = 0; r < rounds; r++) {
      for (const [i, side] of sides.entries())
        one[i]!.push(await phase(slack, side.app, side.url, `s${side.key}${r}`, 1, sequential, side.redis));
    }
    const end = await rssOf();

    const row = (name: string, r: PhaseResult) => ({
      case: name,
      commands: r.latenciesMs.length,
      per_s: round((r.latenciesMs.length / r.elapsedMs) * 1000, 1),
      ...latencySummary(r.latenciesMs),
      failed: r.failed,
      cpu_ms_per_cmd: round(r.cpuMs / r.latenciesMs.length, 2),
      slack_calls_per_cmd: round(r.slackCalls / r.latenciesMs.length, 2),
      slack_calls_by_method: r.slackMethods,
      redis_cmds_per_cmd: Number.isNaN(r.redisCommands)
        ? ''
        : round(r.redisCommands / r.latenciesMs.length, 1),
    });
    const rows = [
      ...sides.flatMap((side, i) =>
        load[i]!.map((r, k) => row(`${side.name}, ${lanes} instances in parallel, round ${k + 1}`, r)),
      ),
      ...sides.flatMap((side, i) =>
        one[i]!.map((r, k) => row(`${side.name}, one command at a time, round ${k + 1}`, r)),
      ),
    ];
    // The median round of each side, with the spread of its rounds.
    const perS = (r: PhaseResult) => (r.latenciesMs.length / r.elapsedMs) * 1000;
    const p50 = (r: PhaseResult) => latencySummary(r.latenciesMs).p50_ms;
    const [il, bl, gl] = load.map((rs) => spread(rs.map(perS)));
    const [i1, b1, g1] = one.map((rs) => spread(rs.map(p50)));
    const [, baseLoad, gpuopsLoad] = load.map(merged) as [PhaseResult, PhaseResult, PhaseResult];
    const [, baseOne, gpuopsOne] = one.map(merged) as [PhaseResult, PhaseResult, PhaseResult];
    const memoryRows = [
      { case: 'RSS gpuops start (MiB)', idle: idle.gpuops, after_load: peak.gpuops, end: end.gpuops },
      { case: 'RSS Bolt + BullMQ baseline (MiB)', idle: idle.base, after_load: peak.base, end: end.base },
      { case: 'RSS inline handler (MiB)', idle: idle.inline, after_load: peak.inline, end: end.inline },
    ];
    const redisPerCmd = (r: PhaseResult) => r.redisCommands / r.latenciesMs.length;
    const redisRatio = round(redisPerCmd(gpuopsLoad) / redisPerCmd(baseLoad));
    const slackRatio = round(gpuopsOne.slackCalls / baseOne.slackCalls);
    return {
      name: 'e2e',
      description: `${build.name === 'dist' ? 'Production build (node dist/, baselines compiled by tsc): ' : ''}/gpu stop|start alternating on ${lanes} instances, ${rounds} interleaved rounds of ${lanes * perLane} commands under load (${lanes} in flight) and ${sequential} one at a time per side, after the same warm-up; medians of the rounds (min–max); sim transitions 0 ms`,
      rows: [...rows, ...memoryRows],
      summary: {
        rounds,
        per_s_gpuops: gl!.text,
        per_s_base: bl!.text,
        per_s_inline: il!.text,
        p50_ms_one_at_a_time_gpuops: g1!.text,
        p50_ms_one_at_a_time_base: b1!.text,
        p50_ms_one_at_a_time_inline: i1!.text,
        throughput_ratio_vs_base: round(gl!.median / bl!.median),
        throughput_ratio_vs_inline: round(gl!.median / il!.median),
        p50_overhead_ms_one_at_a_time_vs_base: round(g1!.median - b1!.median),
        p50_overhead_ms_one_at_a_time_vs_inline: round(g1!.median - i1!.median),
        p50_overhead_ms_under_load_vs_base: round(p50(gpuopsLoad) - p50(baseLoad)),
        redis_cmds_per_cmd_gpuops: round(redisPerCmd(gpuopsLoad), 1),
        redis_cmds_per_cmd_base: round(redisPerCmd(baseLoad), 1),
        slack_calls_per_cmd_gpuops: round(gpuopsOne.slackCalls / gpuopsOne.latenciesMs.length),
        slack_calls_per_cmd_base: round(baseOne.slackCalls / baseOne.latenciesMs.length),
        redis_by_command_gpuops: gpuopsLoad.redisByCommand,
        redis_by_command_base: baseLoad.redisByCommand,
        gpuops_failed: gpuopsLoad.failed + gpuopsOne.failed,
        harness_cpu_ms_per_cmd: round(
          (harness.user + harness.system) / 1000 / (3 * rounds * lanes * perLane),
          2,
        ),
        rss_gpuops_idle_mib: idle.gpuops,
        rss_base_idle_mib: idle.base,
        rss_gpuops_end_mib: end.gpuops,
      },
      targets: [
        atLeast(label('2a e2e: throughput vs Bolt + raw BullMQ (×)'), round(gl!.median / bl!.median), 0.9),
        atMost(
          label('2b e2e: p50 overhead one at a time over Bolt + raw BullMQ (ms)'),
          round(g1!.median - b1!.median),
          1,
        ),
        atMost(label('2c e2e: Redis commands per command vs Bolt + raw BullMQ (×)'), redisRatio, 2),
        // Jobs here finish within a second, so no progress edit is due: the same calls as the baseline.
        atMost(label('2d e2e: Slack calls per command vs Bolt + raw BullMQ, fast jobs (×)'), slackRatio, 1),
        atMost(
          label('5 memory: idle RSS of gpuops start vs Bolt + BullMQ process (×)'),
          round(idle.gpuops / idle.base),
          1.3,
        ),
      ],
    };
  } finally {
    await Promise.all(children.map((c) => stopGently(c)));
    redis.disconnect();
    baseRedis.disconnect();
    await slack.close();
    await redisServer.close();
    await baseRedisServer.close();
  }
}
