import { WebClient } from '@slack/web-api';
import { Redis } from 'ioredis';
import { createInfraClient, type InfraClient } from '../src/cloud/index.js';
import { staticToken } from '../src/cloud/token-provider.js';
import { createLogger } from '../src/log/logger.js';
import { DEFAULT_POLICY } from '../src/policy/policy.js';
import { startSim } from '../src/sim/start-sim.js';
import { writeCatalog } from '../src/store/catalog-cache.js';
import { createStore } from '../src/store/store.js';
import { createWatchSubscriptions } from '../src/store/watch-subscriptions.js';
import { startPrivateRedis } from '../src/sys/private-redis.js';
import { type LookSteps, pollProject } from '../src/watch/poll-project.js';
import type { WatchDeps } from '../src/watch/watch-deps.js';
import { createWatchQueue } from '../src/watch/watch-queue.js';
import type { BenchResult } from './run.js';
import { percentile, round } from './support/stats.js';
import { atMost, type Target } from './support/targets.js';

// Scenario 4, the state watcher: one look at a watched project, as the watcher's scheduled job does it
// (src/watch/poll-project.ts: read the snapshot, list the project, diff, render the changes, commit
// snapshot and messages), at 1,000, 10,000 and 100,000 instances, with 100 and with 0 instances changed
// since the last look. The API call (the listing, as JSON over HTTP from the simulator) is timed apart
// as the baseline; the diff (the listing turned into resources compared with the last look's, then
// the changes found) and the other steps are timed by the look itself (PollOutcome's `steps`), so
// "apart from the diff" is one look's own figure. Targets (issue 16): at 10,000
// instances ≤ 30 ms beyond the API call with 100 changes, ≤ 10 ms with none; the cost should follow
// the changes, not the fleet's size (apart from the diff).

const TYPE = 'h100-hgx-80gb.1x';
const CHANNEL = 'C0WATCH';

/** The cloud client, with the time its list calls take in one look recorded (they run side by side). */
function timedCloud(cloud: InfraClient): { cloud: InfraClient; window: () => number; reset: () => void } {
  let first = Number.POSITIVE_INFINITY;
  let last = 0;
  const proxy = new Proxy(cloud, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof property !== 'string' || !property.startsWith('list') || typeof value !== 'function')
        return value;
      return async (...args: unknown[]) => {
        const started = performance.now();
        first = Math.min(first, started);
        try {
          return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        } finally {
          last = Math.max(last, performance.now());
        }
      };
    },
  });
  return {
    cloud: proxy,
    window: () => last - first,
    reset: () => {
      first = Number.POSITIVE_INFINITY;
      last = 0;
    },
  };
}

async function inBatches<T>(
  items: readonly T[],
  size: number,
  fn: (item: T) => Promise<unknown>,
): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}

interface LookFigures {
  readonly api: number[];
  readonly processing: number[];
  readonly diffs: number[];
  /** Each look's processing less its own diff step: never below zero, the diff is part of it. */
  readonly apartFromDiff: number[];
  readonly totals: number[];
  readonly steps: LookSteps[];
  changes: number;
}

/** What each step of a look is, as the table names it. */
const STEP_NAMES: Readonly<Record<keyof LookSteps, string>> = {
  read: 'read the channels and the stored snapshot (version check; whole read when it moved)',
  list: 'the API calls (the listing)',
  compare: 'the diff: the listing turned into resources and compared with the last look',
  render: 'render the changes',
  spend: 'spend: price book and ledger change',
  commit: 'commit snapshot, messages and ledger (one script)',
  after: 'start the drains, refresh Home tabs',
};

function watchDeps(
  cloud: InfraClient,
  store: ReturnType<typeof createStore>,
  queue: WatchDeps['queue'],
): WatchDeps {
  return {
    cloud,
    slack: new WebClient('xoxb-bench', { slackApiUrl: 'http://127.0.0.1:9/api/' }),
    store,
    log: createLogger({ level: 'silent' }),
    policy: DEFAULT_POLICY,
    shape: 'B',
    // A state-change look acts for nobody.
    submit: () => Promise.reject(new Error('the watcher benchmark submits no requests')),
    botUserId: 'U0BENCH',
    queue,
  };
}

export async function run(options: { sizes?: number[]; looks?: number } = {}): Promise<BenchResult> {
  const sizes =
    options.sizes ?? (process.env.BENCH_WATCH_SIZES ?? '1000,10000,100000').split(',').map(Number);
  const looks = options.looks ?? Number(process.env.BENCH_WATCH_LOOKS ?? 5);
  const changed = Number(process.env.BENCH_WATCH_CHANGES ?? 100);
  const largest = Math.max(...sizes);
  const redisServer = await startPrivateRedis();
  const sim = await startSim({ shape: 'B', port: 0, metrics: false, transitionMs: 0, log: () => {} });
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: null });
  const client = createInfraClient({
    baseUrl: sim.info.cloudUrl,
    shape: 'B',
    tokens: staticToken(sim.info.cloudToken),
    projectId: sim.info.projectId,
    timeoutMs: 60_000,
  });
  const queue = createWatchQueue(redis, '{bench}');
  try {
    sim.control.setCapacity(TYPE, largest * 2);
    const ids: string[] = [];
    const timed = timedCloud(client);
    const projectId = sim.info.projectId;
    const signal = new AbortController().signal;
    // Each fleet size is watched afresh (a store prefix of its own, a first look that only records),
    // so no size inherits the messages of the fleet growing before it.
    let store = createStore(redis, 'bench');
    let deps = watchDeps(timed.cloud, store, queue);
    let flips = 0;
    /** Stops the first `changes` instances, or starts them again (every other call). */
    const flip = async (changes: number) => {
      if (changes === 0) return;
      const stop = flips++ % 2 === 0;
      await inBatches(ids.slice(0, changes), 64, (id) =>
        stop ? client.stopInstance({ id }) : client.startInstance({ id }),
      );
    };
    /** `count` looks with `changes` instances stopped or started before each. */
    const measure = async (changes: number, count: number): Promise<LookFigures> => {
      const figures: LookFigures = {
        api: [],
        processing: [],
        diffs: [],
        apartFromDiff: [],
        totals: [],
        steps: [],
        changes: 0,
      };
      for (let look = 0; look < count; look++) {
        await flip(changes);
        timed.reset();
        const started = performance.now();
        const outcome = await pollProject(deps, projectId, signal);
        const total = performance.now() - started;
        if (outcome.status !== 'committed') throw new Error(`look ${look}: ${JSON.stringify(outcome)}`);
        // The look lists everything before it compares (collect-resources.ts), so its diff step lies
        // outside the API calls' window and inside the look: processing - diff >= 0.
        const processing = total - timed.window();
        figures.changes = outcome.changes;
        figures.totals.push(total);
        figures.api.push(timed.window());
        figures.processing.push(processing);
        figures.diffs.push(outcome.steps.compare);
        figures.apartFromDiff.push(processing - outcome.steps.compare);
        figures.steps.push(outcome.steps);
      }
      return figures;
    };
    const median = (xs: number[]) => round(percentile(xs, 50));
    const rows: Record<string, string | number>[] = [];
    const targets: Target[] = [];
    const beyondDiff: Record<number, number> = {};
    const stepRows: Record<string, string | number>[] = [];
    let bytes = 0;
    for (const size of [...sizes].sort((a, b) => a - b)) {
      await inBatches(
        Array.from({ length: size - ids.length }, (_, i) => ids.length + i),
        64,
        async (i) => ids.push((await client.createInstance({ name: `w-${i}`, type: TYPE })).id),
      );
      store = createStore(redis, `bench${size}`);
      deps = watchDeps(timed.cloud, store, queue);
      // The catalogue as its refresh job writes it, which lists the project's instances: a look reads
      // its price list.
      await writeCatalog(store, projectId, {
        v: 1,
        refreshedAt: Date.now(),
        configurations: [
          {
            gpuType: 'H100_SXM5_80GB',
            gpuCounts: [1, 2, 4, 8],
            pricePerGpuHour: '2.95',
            stoppedPricePerHour: '0.12',
            regions: ['eu-north1'],
            provisioningMinutes: 5,
          },
        ],
        instanceTypes: [],
        instances: (await client.listInstances()).map((i) => ({ id: i.id, name: i.name, type: i.type })),
        problems: [],
      });
      await createWatchSubscriptions(store).watch({
        channelId: CHANNEL,
        projectId,
        by: 'U0BENCH',
        since: Date.now(),
      });
      const first = await pollProject(deps, projectId, signal);
      if (first.status !== 'baseline') throw new Error(`first look: ${JSON.stringify(first)}`);
      const n = size >= 100_000 ? Math.min(looks, 3) : looks;
      for (const changes of [changed, 0]) {
        const f = await measure(changes, n);
        rows.push({
          case: `${size} instances, ${f.changes} changed`,
          api_ms: median(f.api),
          beyond_api_ms: median(f.processing),
          of_which_diff_ms: median(f.diffs),
          apart_from_diff_ms: median(f.apartFromDiff),
          whole_look_ms: median(f.totals),
          max_beyond_api_ms: round(Math.max(...f.processing)),
        });
        if (changes > 0) beyondDiff[size] = percentile(f.apartFromDiff, 50);
        if (size === 10_000) {
          stepRows.push(...stepTable(`10,000 instances, ${f.changes} changed`, f.steps));
          targets.push(
            changes > 0
              ? atMost(
                  `4a watch: 10,000 instances, ${changes} changes, beyond the API call (ms)`,
                  median(f.processing),
                  30,
                )
              : atMost(
                  '4b watch: 10,000 instances, 0 changes, beyond the API call (ms)',
                  median(f.processing),
                  10,
                ),
          );
        }
      }
      if (size === 10_000) bytes = Buffer.byteLength(JSON.stringify(await client.listInstances()));
    }
    const smallest = Math.min(...sizes);
    if (beyondDiff[smallest] !== undefined && beyondDiff[largest] !== undefined && largest > smallest) {
      // Apart from the diff, a look's cost should follow the changes (the same here), not the fleet:
      // the median over looks of each look's processing less its own diff step.
      const [small, large] = [beyondDiff[smallest]!, beyondDiff[largest]!];
      targets.push(
        atMost(
          `4c watch: cost apart from the diff, ${largest} vs ${smallest} instances, ${changed} changes (×)`,
          small > 0 && large > 0 ? round(large / small) : Number.NaN,
          2,
        ),
      );
    }
    return {
      name: 'watch',
      description: `One look at a watched project (pollProject) of ${sizes.join(', ')} instances, ${changed} and 0 changed, ${looks} looks each (3 at 100,000); the 10,000 listing is ${round(bytes / 1e6, 1)} MB of JSON`,
      iterations: looks,
      rows: [...rows, ...stepRows],
      summary: Object.fromEntries(
        rows.map((r) => [`beyond_api_ms_${String(r.case).replace(/\W+/g, '_')}`, r.beyond_api_ms!]),
      ),
      targets,
    };
  } finally {
    await queue.close();
    await client.close();
    redis.disconnect();
    await sim.close();
    await redisServer.close();
  }
}

/** Where a look's time goes: the look's own steps, median and slowest over the looks. */
function stepTable(label: string, steps: readonly LookSteps[]): Record<string, string | number>[] {
  return (Object.keys(STEP_NAMES) as (keyof LookSteps)[]).map((step) => {
    const values = steps.map((s) => s[step]);
    const row = { case: `  ${label}, step: ${STEP_NAMES[step]}` };
    // The API calls are the baseline, not part of the processing.
    return step === 'list'
      ? { ...row, api_ms: round(percentile(values, 50)) }
      : {
          ...row,
          beyond_api_ms: round(percentile(values, 50)),
          max_beyond_api_ms: round(Math.max(...values)),
        };
  });
}
