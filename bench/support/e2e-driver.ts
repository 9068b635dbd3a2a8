import type { Redis } from 'ioredis';
import { request } from 'undici';
import type { FakeSlackApi } from '../../src/devkit/fake-slack-api.js';
import type { GpuopsProcess } from '../../test/support/gpuops-process.js';
import { postSigned, slashCommandBody } from '../../test/support/slack-driver.js';
import { benchPersonId } from './bench-people.js';
import { cpuSplitMs } from './stats.js';

// The end-to-end benchmarks' driver (bench/e2e.bench.ts, bench/scale.bench.ts): signed `/gpu stop` and
// `/gpu start` alternating on each instance, each timed from sending to the final chat.update.

export const SECRET = 'bench-signing-secret';
export const BOT_TOKEN = 'xoxb-bench';
export const TYPE = 'h100-hgx-80gb.1x';
const FINAL = /^(Done|Failed):/;

export interface PhaseResult {
  readonly latenciesMs: number[];
  readonly elapsedMs: number;
  readonly failed: number;
  /** CPU time of all the app's processes together, and of each. */
  readonly cpuMs: number;
  readonly cpuMsEach: number[];
  readonly slackCalls: number;
  /** The same by Web API method, e.g. "chat.update 2, chat.postMessage 1". */
  readonly slackMethods: string;
  /** Commands Redis executed meanwhile, as INFO commandstats counts them (inside scripts included). */
  readonly redisCommands: number;
  readonly redisByCommand: string;
}

/** Calls of each command Redis has executed since its start (or the last CONFIG RESETSTAT). */
export async function redisCommandCounts(redis: Redis): Promise<Map<string, number>> {
  const info = await redis.info('commandstats');
  return new Map([...info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map((m) => [m[1]!, Number(m[2])]));
}

const sum = (counts: Map<string, number>) => [...counts.values()].reduce((a, b) => a + b, 0);

/** The commands of a phase per command sent, most first, e.g. "get 12.1, evalsha 6". */
function perCommand(before: Map<string, number>, after: Map<string, number>, commands: number): string {
  return [...after]
    .map(([name, n]) => [name, (n - (before.get(name) ?? 0)) / commands] as const)
    .filter(([, n]) => n >= 0.05)
    .sort((a, b) => b[1] - a[1])
    .map(([name, n]) => `${name} ${Math.round(n * 10) / 10}`)
    .join(', ');
}

export async function phase(
  slack: FakeSlackApi,
  app: GpuopsProcess | readonly GpuopsProcess[],
  url: string,
  tag: string,
  lanes: number,
  perLane: number,
  redis?: Redis,
): Promise<PhaseResult> {
  const latenciesMs: number[] = [];
  let failed = 0;
  const apps = Array.isArray(app) ? app : [app as GpuopsProcess];
  const cpuOf = () =>
    Promise.all(
      apps.map(async (a) => {
        const { user, system } = await cpuSplitMs(a.child.pid!);
        return user + system;
      }),
    );
  const cpuBefore = await cpuOf();
  const redisBefore = redis ? await redisCommandCounts(redis) : new Map<string, number>();
  const callsBefore = slack.calls.length;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      for (let k = 0; k < perLane; k++) {
        // stop, start, stop, … : the instance is running at the start and at the end of every lane.
        const verb = k % 2 === 0 ? 'stop' : 'start';
        // One person per lane, the same in every phase (a workspace has few people and many commands),
        // each command from a channel of its own: gpuops takes the same command from the same person
        // in the same channel within 30 s as a double submission.
        const channel = `C${tag}${lane}x${k}`;
        const since = slack.mark();
        const t0 = performance.now();
        const response = await postSigned(
          url,
          slashCommandBody({
            text: `${verb} bench-${lane}`,
            channelId: channel,
            userId: benchPersonId(lane),
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
  // The last edit is seen before its job is marked completed: let the queue settle before counting.
  if (redis) await new Promise((resolve) => setTimeout(resolve, 200));
  const cpuAfter = await cpuOf();
  const cpuMsEach = cpuAfter.map((c, i) => c - cpuBefore[i]!);
  return {
    latenciesMs,
    elapsedMs,
    failed,
    cpuMs: cpuMsEach.reduce((a, b) => a + b, 0),
    cpuMsEach,
    slackCalls: slack.calls.length - callsBefore,
    slackMethods: byMethod(slack.calls.slice(callsBefore), latenciesMs.length),
    ...(await redisDelta(redis, redisBefore, latenciesMs.length)),
  };
}

/**
 * The instances, made through gpuops as a person would (`/gpu create`), so gpuops knows their type and
 * prices a later start within the no-approval threshold (docs/policy.md).
 */
export async function createInstances(slack: FakeSlackApi, url: string, controlUrl: string, count: number) {
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

async function redisDelta(redis: Redis | undefined, before: Map<string, number>, commands: number) {
  if (!redis) return { redisCommands: Number.NaN, redisByCommand: '' };
  const after = await redisCommandCounts(redis);
  return { redisCommands: sum(after) - sum(before), redisByCommand: perCommand(before, after, commands) };
}

function byMethod(calls: ReadonlyArray<{ method: string }>, commands: number): string {
  const counts = new Map<string, number>();
  for (const c of calls) counts.set(c.method, (counts.get(c.method) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([method, n]) => `${method} ${Math.round((n / commands) * 100) / 100}`)
    .join(', ');
}

/** Several rounds of one side as one: counts add up; the by-method breakdowns are the middle round's. */
export function merged(rounds: readonly PhaseResult[]): PhaseResult {
  const add = (f: (r: PhaseResult) => number) => rounds.reduce((n, r) => n + f(r), 0);
  const middle = rounds[Math.floor(rounds.length / 2)]!;
  return {
    latenciesMs: rounds.flatMap((r) => r.latenciesMs),
    elapsedMs: add((r) => r.elapsedMs),
    failed: add((r) => r.failed),
    cpuMs: add((r) => r.cpuMs),
    cpuMsEach: middle.cpuMsEach,
    slackCalls: add((r) => r.slackCalls),
    slackMethods: middle.slackMethods,
    redisCommands: add((r) => r.redisCommands),
    redisByCommand: middle.redisByCommand,
  };
}
