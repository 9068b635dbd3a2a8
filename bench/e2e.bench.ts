import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { FakeSlackApi } from '../src/devkit/fake-slack-api.js';
import { startPrivateRedis } from '../src/sys/private-redis.js';
import { type GpuopsProcess, spawnGpuops, spawnScript } from '../test/support/gpuops-process.js';
import { postSigned, slashCommandBody } from '../test/support/slack-driver.js';
import type { BenchResult } from './run.js';
import { cpuSplitMs, latencySummary, round, rssMiB } from './support/stats.js';
import { stopGently } from './support/stop-gently.js';
import { UNLIMITED_POLICY_FILE } from './support/unlimited-policy.js';
import { waitForCatalogue } from './support/wait-for-catalogue.js';

// Scenario 2, end to end, and scenario 5, memory. `/gpu stop` and `/gpu start` commands, alternating on
// each of many instances so every one is valid, through `gpuops start` (listener, Redis queue, workers,
// simulator, Slack fake), against an inline handler that calls the same simulator from the listener
// with no queue (bench/support/inline-bolt.ts). Latency is from sending the command to the final
// chat.update (Done/Failed) of its message. Both apps run as child processes; so does the simulator
// (transitions of 0 ms). The driver and the Slack fake run here. Both sides are measured the same way:
// warmed up alike, then several rounds interleaved (inline, gpuops, inline, gpuops, …) so that a
// stretch of other work on the shared cores hits both; the summary gives each figure's median over
// the rounds with its spread (lowest and highest round).
// Targets: throughput at least 0.8× the inline handler; p50 latency overhead under 5 ms.

const SECRET = 'bench-signing-secret';
const BOT_TOKEN = 'xoxb-bench';
const TYPE = 'h100-hgx-80gb.1x';
const FINAL = /^(Done|Failed):/;

/** The median of the rounds' values and their spread, lowest to highest. */
function acrossRounds(values: readonly number[], digits = 2) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  const median = sorted.length % 2 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return {
    median: round(median, digits),
    min: round(sorted[0]!, digits),
    max: round(sorted.at(-1)!, digits),
  };
}

interface PhaseResult {
  readonly latenciesMs: number[];
  readonly elapsedMs: number;
  readonly failed: number;
  readonly cpuMs: number;
  readonly slackCalls: number;
}

async function phase(
  slack: FakeSlackApi,
  app: GpuopsProcess | readonly GpuopsProcess[],
  url: string,
  tag: string,
  lanes: number,
  perLane: number,
): Promise<PhaseResult> {
  const latenciesMs: number[] = [];
  let failed = 0;
  const apps = Array.isArray(app) ? app : [app as GpuopsProcess];
  const cpuOf = async () => {
    let total = 0;
    for (const a of apps) {
      const { user, system } = await cpuSplitMs(a.child.pid!);
      total += user + system;
    }
    return total;
  };
  const cpuBefore = await cpuOf();
  const callsBefore = slack.calls.length;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      const channel = `CB${lane}`;
      for (let k = 0; k < perLane; k++) {
        // stop, start, stop, … : the instance is running at the start and at the end of every lane.
        const verb = k % 2 === 0 ? 'stop' : 'start';
        const since = slack.mark();
        const t0 = performance.now();
        const response = await postSigned(
          url,
          // Each command from its own user: gpuops takes the same command from the same person
          // within 30 s as a double submission.
          slashCommandBody({
            text: `${verb} bench-${lane}`,
            channelId: channel,
            userId: `U${tag}${lane}x${k}`,
          }),
          { secret: SECRET },
        );
        if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${response.text}`);
        const final = await slack.waitFor(
          'chat.update',
          (c) => c.body.channel === channel && FINAL.test(String(c.body.text)),
          120_000,
          since,
        );
        latenciesMs.push(performance.now() - t0);
        if (!String(final.body.text).startsWith('Done:')) failed++;
      }
    }),
  );
  const elapsedMs = performance.now() - started;
  return {
    latenciesMs,
    elapsedMs,
    failed,
    cpuMs: (await cpuOf()) - cpuBefore,
    slackCalls: slack.calls.length - callsBefore,
  };
}

/**
 * The instances, made through gpuops as a person would (`/gpu create`), so gpuops knows their type and
 * prices a later start within the no-approval threshold (docs/policy.md).
 */
async function createInstances(slack: FakeSlackApi, url: string, controlUrl: string, count: number) {
  await (
    await request(`${controlUrl}/capacity`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: TYPE, capacity: 100_000 }),
    })
  ).body.dump();
  await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const channel = `CB${i}`;
      const since = slack.mark();
      await postSigned(url, slashCommandBody({ text: `create bench-${i} ${TYPE}`, channelId: channel }), {
        secret: SECRET,
      });
      const final = await slack.waitFor(
        'chat.update',
        (c) => c.body.channel === channel && FINAL.test(String(c.body.text)),
        60_000,
        since,
      );
      if (!String(final.body.text).startsWith('Done:')) throw new Error(String(final.body.text));
    }),
  );
}

/** Lowest to highest round, as text for the summary. */
const spread = (r: { min: number; max: number }) => `${r.min} to ${r.max}`;

/** Rounds to an even count: each lane alternates stop and start, and must end with its instance running. */
const even = (n: number) => Math.max(2, 2 * Math.round(n / 2));

export async function run(
  options: { lanes?: number; perLane?: number; sequential?: number; rounds?: number; warmup?: number } = {},
): Promise<BenchResult> {
  const lanes = options.lanes ?? Number(process.env.BENCH_E2E_LANES ?? 50);
  // Per round; the defaults make about as many commands in all as the single round did before.
  const perLane = even(options.perLane ?? Number(process.env.BENCH_E2E_PER_LANE ?? 14));
  const sequential = even(options.sequential ?? Number(process.env.BENCH_E2E_SEQUENTIAL ?? 34));
  const rounds = Math.max(1, options.rounds ?? Number(process.env.BENCH_E2E_ROUNDS ?? 3));
  const warmup = even(options.warmup ?? Number(process.env.BENCH_E2E_WARMUP ?? 6));
  const redisServer = await startPrivateRedis();
  const slack = await FakeSlackApi.start({ tokens: [BOT_TOKEN] });
  const children: GpuopsProcess[] = [];
  try {
    const sim = spawnGpuops(
      ['sim', '--shape', 'B', '--transition-ms', '0', '--no-metrics', '--seed', '7'],
      {},
    );
    children.push(sim);
    const info = (await sim.waitForLog((r) => typeof r.cloudUrl === 'string', 30_000)) as Record<
      string,
      string
    >;

    const inline = spawnScript('bench/support/inline-bolt.ts', {
      SIGNING_SECRET: SECRET,
      SLACK_API_URL: slack.apiUrl,
      SLACK_BOT_TOKEN: BOT_TOKEN,
      CLOUD_API_URL: info.cloudUrl!,
      CLOUD_API_TOKEN: info.cloudToken!,
      CLOUD_PROJECT_ID: info.projectId!,
    });
    children.push(inline);
    const gpuopsEnv = {
      SLACK_BOT_TOKEN: BOT_TOKEN,
      SLACK_SIGNING_SECRET: SECRET,
      SLACK_API_URL: slack.apiUrl,
      PORT: '0',
      OPS_PORT: '0',
      REDIS_URL: redisServer.url,
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
      CLOUD_API_URL: info.cloudUrl!,
      CLOUD_API_TOKEN: info.cloudToken!,
      CLOUD_PROJECT_ID: info.projectId!,
      // Prices come from the platform API: without them every create and start waits for an approver.
      PLATFORM_API_URL: info.platformUrl!,
      PLATFORM_API_KEY: info.platformApiKey!,
      GPUOPS_POLICY: UNLIMITED_POLICY_FILE,
      ...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}),
    };
    const gpuops = spawnGpuops(['start'], gpuopsEnv);
    children.push(gpuops);
    const [inlineReady, gpuopsReady] = await Promise.all([
      inline.waitForLog((r) => r.msg === 'ready', 30_000),
      gpuops.waitForLog((r) => r.msg === 'gpuops ready', 30_000),
    ]);
    const inlineUrl = `http://127.0.0.1:${inlineReady.port}/slack/events`;
    const gpuopsUrl = `http://127.0.0.1:${gpuopsReady.port}/slack/events`;
    // Idle: started and connected, nothing asked yet (a moment for start-up garbage to be collected).
    await sleep(2_000);
    const idleBefore = { gpuops: await rssMiB(gpuops.child.pid!), inline: await rssMiB(inline.child.pid!) };
    await waitForCatalogue(redisServer.url, info.projectId!);
    await createInstances(slack, gpuopsUrl, info.controlUrl!, lanes);
    const idle = idleBefore;

    // Warm-up (connections, JIT, caches), not measured, alike for both and interleaved: `warmup`
    // commands per instance in two halves, then a few one at a time.
    for (const half of [1, 2]) {
      await phase(slack, inline, inlineUrl, `wi${half}`, lanes, warmup / 2);
      await phase(slack, gpuops, gpuopsUrl, `wg${half}`, lanes, warmup / 2);
    }
    await phase(slack, inline, inlineUrl, 'wsi', 1, warmup);
    await phase(slack, gpuops, gpuopsUrl, 'wsg', 1, warmup);

    const harnessBefore = process.cpuUsage();
    const inlineLoad: PhaseResult[] = [];
    const gpuopsLoad: PhaseResult[] = [];
    for (let r = 0; r < rounds; r++) {
      inlineLoad.push(await phase(slack, inline, inlineUrl, `li${r}x`, lanes, perLane));
      gpuopsLoad.push(await phase(slack, gpuops, gpuopsUrl, `lg${r}x`, lanes, perLane));
    }
    const harness = process.cpuUsage(harnessBefore);
    const peak = { gpuops: await rssMiB(gpuops.child.pid!), inline: await rssMiB(inline.child.pid!) };
    // One command at a time: the latency a person sees when the bot is not busy.
    const inlineOne: PhaseResult[] = [];
    const gpuopsOne: PhaseResult[] = [];
    for (let r = 0; r < rounds; r++) {
      inlineOne.push(await phase(slack, inline, inlineUrl, `si${r}x`, 1, sequential));
      gpuopsOne.push(await phase(slack, gpuops, gpuopsUrl, `sg${r}x`, 1, sequential));
    }
    const end = { gpuops: await rssMiB(gpuops.child.pid!), inline: await rssMiB(inline.child.pid!) };

    // The same load on a split deployment: `gpuops web` and `gpuops worker`, one process each, on the
    // same Redis (scale-out is BullMQ's: any number of each share the queue).
    await stopGently(gpuops);
    const web = spawnGpuops(['web'], gpuopsEnv);
    const worker = spawnGpuops(['worker'], gpuopsEnv);
    children.push(web, worker);
    const [webReady] = await Promise.all([
      web.waitForLog((r) => r.msg === 'gpuops ready', 30_000),
      worker.waitForLog((r) => r.msg === 'gpuops ready', 30_000),
    ]);
    const webUrl = `http://127.0.0.1:${webReady.port}/slack/events`;
    await phase(slack, [web, worker], webUrl, 'ws', lanes, warmup);
    const splitLoad: PhaseResult[] = [];
    for (let r = 0; r < rounds; r++)
      splitLoad.push(await phase(slack, [web, worker], webUrl, `ls${r}x`, lanes, perLane));

    const row = (name: string, r: PhaseResult) => ({
      case: name,
      commands: r.latenciesMs.length,
      per_s: round((r.latenciesMs.length / r.elapsedMs) * 1000, 1),
      ...latencySummary(r.latenciesMs),
      failed: r.failed,
      cpu_ms_per_cmd: round(r.cpuMs / r.latenciesMs.length, 2),
      slack_calls_per_cmd: round(r.slackCalls / r.latenciesMs.length, 2),
    });
    const perRound = (name: string, results: readonly PhaseResult[]) =>
      results.map((r, i) => row(`${name}, round ${i + 1}`, r));
    const il = perRound(`inline handler, ${lanes} instances in parallel`, inlineLoad);
    const gl = perRound(`gpuops start, ${lanes} instances in parallel`, gpuopsLoad);
    const i1 = perRound('inline handler, one command at a time', inlineOne);
    const g1 = perRound('gpuops start, one command at a time', gpuopsOne);
    const sl = perRound(`gpuops web + gpuops worker, ${lanes} instances in parallel`, splitLoad);
    const rows = [...il, ...gl, ...i1, ...g1, ...sl];
    // Each round's gpuops figure against the inline handler's of the same round, then across rounds.
    const ratio = (mine: typeof il, base: typeof il) =>
      acrossRounds(mine.map((m, i) => m.per_s / base[i]!.per_s));
    const overhead = (mine: typeof il, base: typeof il) =>
      acrossRounds(mine.map((m, i) => m.p50_ms - base[i]!.p50_ms));
    const failed = [...gpuopsLoad, ...gpuopsOne].reduce((n, r) => n + r.failed, 0);
    const measured = 2 * rounds * lanes * perLane;
    const memoryRows = [
      { case: 'RSS gpuops start (MiB)', idle: idle.gpuops, after_load: peak.gpuops, end: end.gpuops },
      { case: 'RSS inline handler (MiB)', idle: idle.inline, after_load: peak.inline, end: end.inline },
    ];
    return {
      name: 'e2e',
      description: `/gpu stop|start alternating on ${lanes} instances, ${rounds} interleaved rounds each of ${lanes * perLane} commands under load (${lanes} in flight) and ${sequential} one at a time, after ${warmup} warm-up commands per instance; medians over rounds with [lowest, highest]; sim transitions 0 ms`,
      rows: [...rows, ...memoryRows],
      summary: {
        rounds,
        throughput_ratio: ratio(gl, il).median,
        throughput_ratio_spread: spread(ratio(gl, il)),
        throughput_ratio_split_web_worker: ratio(sl, il).median,
        throughput_ratio_split_spread: spread(ratio(sl, il)),
        target_throughput_ratio: 0.8,
        p50_overhead_ms_one_at_a_time: overhead(g1, i1).median,
        p50_overhead_ms_one_at_a_time_spread: spread(overhead(g1, i1)),
        p50_overhead_ms_under_load: overhead(gl, il).median,
        p50_overhead_ms_under_load_spread: spread(overhead(gl, il)),
        target_p50_overhead_ms: 5,
        gpuops_failed: failed,
        harness_cpu_ms_per_cmd: round((harness.user + harness.system) / 1000 / measured, 2),
        rss_gpuops_idle_mib: idle.gpuops,
        rss_gpuops_end_mib: end.gpuops,
      },
    };
  } finally {
    await Promise.all(children.map((c) => stopGently(c)));
    await slack.close();
    await redisServer.close();
  }
}
