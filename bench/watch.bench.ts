import { WebClient } from '@slack/web-api';
import { Redis } from 'ioredis';
import { createInfraClient, type InfraClient } from '../src/cloud/index.js';
import { staticToken } from '../src/cloud/token-provider.js';
import { createLogger } from '../src/log/logger.js';
import { DEFAULT_POLICY } from '../src/policy/policy.js';
import { startSim } from '../src/sim/start-sim.js';
import { createStore } from '../src/store/store.js';
import { createSnapshotStore } from '../src/store/watch-snapshots.js';
import { createWatchSubscriptions } from '../src/store/watch-subscriptions.js';
import { startPrivateRedis } from '../src/sys/private-redis.js';
import { collectResources } from '../src/watch/collect-resources.js';
import { diffSnapshots } from '../src/watch/diff-snapshot.js';
import { entriesFor, pollProject } from '../src/watch/poll-project.js';
import { accrue, periodsOf, priceBookFor } from '../src/watch/spend.js';
import type { WatchDeps } from '../src/watch/watch-deps.js';
import { createWatchQueue } from '../src/watch/watch-queue.js';
import type { BenchResult } from './run.js';
import { percentile, round } from './support/stats.js';

// Scenario 4, the state watcher: one look at a watched project of 10,000 instances, as the watcher's
// scheduled job does it (src/watch/poll-project.ts: read the snapshot, list the project, diff, render
// the changes, commit snapshot and messages), with 1% of the instances changed since the last look.
// The API call (the listing, 10,000 instances as JSON over HTTP from the simulator) is timed apart;
// the target is under 50 ms of processing beyond it. The pure diff of the two snapshots is timed too.

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

export async function run(options: { instances?: number; looks?: number } = {}): Promise<BenchResult> {
  const instances = options.instances ?? Number(process.env.BENCH_WATCH_INSTANCES ?? 10_000);
  const looks = options.looks ?? Number(process.env.BENCH_WATCH_LOOKS ?? 7);
  const changed = Math.max(1, Math.round(instances / 100));
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
    sim.control.setCapacity(TYPE, instances * 2);
    const ids: string[] = [];
    await inBatches(
      Array.from({ length: instances }, (_, i) => i),
      64,
      async (i) => ids.push((await client.createInstance({ name: `w-${i}`, type: TYPE })).id),
    );

    const timed = timedCloud(client);
    const store = createStore(redis, 'bench');
    const deps: WatchDeps = {
      cloud: timed.cloud,
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
    const projectId = sim.info.projectId;
    await createWatchSubscriptions(store).watch({
      channelId: CHANNEL,
      projectId,
      by: 'U0BENCH',
      since: Date.now(),
    });
    const signal = new AbortController().signal;
    const baseline = await pollProject(deps, projectId, signal);
    if (baseline.status !== 'baseline') throw new Error(`first look: ${JSON.stringify(baseline)}`);

    const snapshots = createSnapshotStore(store);
    const totals: number[] = [];
    const api: number[] = [];
    const processing: number[] = [];
    const diffs: number[] = [];
    let changes = 0;
    for (let look = 0; look < looks; look++) {
      // 1% of the machines change state between two looks: stopped, then started again.
      const subset = ids.slice(0, changed);
      await inBatches(subset, 64, (id) =>
        look % 2 === 0 ? client.stopInstance({ id }) : client.startInstance({ id }),
      );
      const before = await snapshots.read(projectId);
      timed.reset();
      const started = performance.now();
      const outcome = await pollProject(deps, projectId, signal);
      const total = performance.now() - started;
      if (outcome.status !== 'committed') throw new Error(`look ${look}: ${JSON.stringify(outcome)}`);
      changes = outcome.changes;
      totals.push(total);
      api.push(timed.window());
      processing.push(total - timed.window());
      // The pure diff, on the same two snapshots.
      const after = await snapshots.read(projectId);
      const t0 = performance.now();
      diffSnapshots(before.snapshot!.resources, after.snapshot!.resources);
      diffs.push(performance.now() - t0);
    }
    // Where the processing goes: the same steps pollProject takes, one at a time (after the looks above,
    // so on the same data), each timed on its own.
    const phases: Record<string, number[]> = {
      'read the stored snapshot (Redis, JSON, schema)': [],
      'diff the two snapshots': [],
      'render the changes': [],
      'commit snapshot and messages (schema, JSON, Redis)': [],
      'spend: price book and accrual': [],
      'spend: ledger increments (Redis)': [],
    };
    const time = async <T>(phase: string, fn: () => T | Promise<T>): Promise<T> => {
      const t0 = performance.now();
      const result = await fn();
      phases[phase]!.push(performance.now() - t0);
      return result;
    };
    for (let round = 0; round < looks; round++) {
      const subset = ids.slice(0, changed);
      await inBatches(subset, 64, (id) =>
        (looks + round) % 2 === 0 ? client.stopInstance({ id }) : client.startInstance({ id }),
      );
      const stored = await time('read the stored snapshot (Redis, JSON, schema)', () =>
        snapshots.read(projectId),
      );
      const collected = await collectResources(client, projectId);
      const now = Date.now();
      const next = { v: 1 as const, polledAt: now, resources: collected.resources };
      const found = await time('diff the two snapshots', () =>
        diffSnapshots(stored.snapshot!.resources, next.resources),
      );
      const entries = await time('render the changes', () => found.flatMap((c) => entriesFor(c, now)));
      await time('commit snapshot and messages (schema, JSON, Redis)', () =>
        snapshots.commit(projectId, stored.version, next, [CHANNEL], entries),
      );
      const accrual = await time('spend: price book and accrual', async () =>
        accrue(stored.snapshot!, now, await priceBookFor(store, projectId, DEFAULT_POLICY)),
      );
      const { day, month } = periodsOf(now, DEFAULT_POLICY.digest.tz);
      await time('spend: ledger increments (Redis)', () =>
        snapshots.addToLedger(projectId, day, month, accrual),
      );
    }
    const bytes = Buffer.byteLength(JSON.stringify(await client.listInstances()));
    const median = (xs: number[]) => round(percentile(xs, 50));
    return {
      name: 'watch',
      description: `One look at a watched project of ${instances} instances with ${changes} changed (pollProject), ${looks} looks; listing ${round(bytes / 1e6, 1)} MB of JSON`,
      iterations: looks,
      rows: [
        {
          case: 'API call: list the project (baseline)',
          median_ms: median(api),
          max_ms: round(Math.max(...api)),
        },
        {
          case: 'processing beyond the API call',
          median_ms: median(processing),
          max_ms: round(Math.max(...processing)),
        },
        {
          case: '  of which: diffSnapshots alone',
          median_ms: median(diffs),
          max_ms: round(Math.max(...diffs)),
        },
        { case: 'whole look (pollProject)', median_ms: median(totals), max_ms: round(Math.max(...totals)) },
        ...Object.entries(phases).map(([phase, values]) => ({
          case: `  step: ${phase}`,
          median_ms: median(values),
          max_ms: round(Math.max(...values)),
        })),
      ],
      summary: {
        processing_median_ms: median(processing),
        processing_max_ms: round(Math.max(...processing)),
        target_processing_ms: 50,
        api_median_ms: median(api),
        diff_median_ms: median(diffs),
        changes_per_look: changes,
      },
    };
  } finally {
    await queue.close();
    await client.close();
    redis.disconnect();
    await sim.close();
    await redisServer.close();
  }
}
