import { WebClient } from '@slack/web-api';
import { Redis } from 'ioredis';
import { createInfraClient } from '../src/cloud/index.js';
import { staticToken } from '../src/cloud/token-provider.js';
import { FakeSlackApi } from '../src/devkit/fake-slack-api.js';
import { createLogger } from '../src/log/logger.js';
import { DEFAULT_POLICY } from '../src/policy/policy.js';
import { startSim } from '../src/sim/start-sim.js';
import { createStore } from '../src/store/store.js';
import { createWatchSubscriptions } from '../src/store/watch-subscriptions.js';
import { startPrivateRedis } from '../src/sys/private-redis.js';
import { createWatchWorker } from '../src/watch/create-watch-worker.js';
import { pollProject } from '../src/watch/poll-project.js';
import type { WatchDeps } from '../src/watch/watch-deps.js';
import { createWatchQueue } from '../src/watch/watch-queue.js';
import type { BenchResult } from './run.js';
import { round } from './support/stats.js';
import { atMost } from './support/targets.js';

// Scenario 7, grouped notifications (docs/watch.md): a look that finds 1,000 machines changed (all
// stopped, then all started again), through the real path: pollProject commits the snapshot and the
// outbox entries, a watch worker's drain job sends them through the Slack SDK to the fake Slack Web
// API at the pace Slack allows a channel (one call a second, the default). Counted: the Slack calls
// made until the last change is in the channel, and the time from the start of the look to then.
// Target (issue 31): at most 5 calls, within 10 s.

const TYPE = 'cpu.16x';
const CHANNEL = 'C0GROUPED';
const MACHINES = 1_000;

async function inBatches<T>(items: readonly T[], size: number, fn: (item: T) => Promise<unknown>) {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}

export async function run(options: { looks?: number } = {}): Promise<BenchResult> {
  const looks = options.looks ?? Number(process.env.BENCH_GROUPED_LOOKS ?? 3);
  const redisServer = await startPrivateRedis();
  const sim = await startSim({ shape: 'B', port: 0, metrics: false, transitionMs: 0, log: () => {} });
  const slack = await FakeSlackApi.start({ tokens: ['xoxb-bench'] });
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: null });
  const workerRedis = new Redis(redisServer.url, { maxRetriesPerRequest: null });
  const cloud = createInfraClient({
    baseUrl: sim.info.cloudUrl,
    shape: 'B',
    tokens: staticToken(sim.info.cloudToken),
    projectId: sim.info.projectId,
    timeoutMs: 60_000,
  });
  const queue = createWatchQueue(redis, '{bench}');
  const store = createStore(redis, 'bench');
  const deps: WatchDeps = {
    cloud,
    // As the composition root builds it: a 429 reaches the drain, which waits it out.
    slack: new WebClient('xoxb-bench', { slackApiUrl: slack.apiUrl, rejectRateLimitedCalls: true }),
    store,
    log: createLogger({ level: 'silent' }),
    policy: DEFAULT_POLICY,
    shape: 'B',
    submit: () => Promise.reject(new Error('the grouped-notification benchmark submits no requests')),
    botUserId: 'U0BENCH',
    queue,
  };
  const worker = createWatchWorker(workerRedis, deps, { prefix: '{bench}' });
  try {
    const projectId = sim.info.projectId;
    const signal = new AbortController().signal;
    sim.control.setCapacity(TYPE, MACHINES * 2);
    const ids: string[] = [];
    await inBatches(
      Array.from({ length: MACHINES }, (_, i) => i),
      64,
      async (i) => ids.push((await cloud.createInstance({ name: `g-${i}`, type: TYPE })).id),
    );
    await createWatchSubscriptions(store).watch({
      channelId: CHANNEL,
      projectId,
      by: 'U0BENCH',
      since: Date.now(),
    });
    const first = await pollProject(deps, projectId, signal);
    if (first.status !== 'baseline') throw new Error(`first look: ${JSON.stringify(first)}`);

    const rows: Record<string, string | number>[] = [];
    for (let look = 0; look < looks; look++) {
      const stop = look % 2 === 0;
      await inBatches(ids, 64, (id) => (stop ? cloud.stopInstance({ id }) : cloud.startInstance({ id })));
      const since = slack.mark();
      const started = performance.now();
      const outcome = await pollProject(deps, projectId, signal);
      if (outcome.status !== 'committed' || outcome.changes !== MACHINES) {
        throw new Error(`look ${look}: ${JSON.stringify(outcome)}`);
      }
      // The last page of the thread names the last change: then every change is in the channel.
      const total = MACHINES.toLocaleString('en');
      const last = await slack.waitFor(
        'chat.postMessage',
        (call) => String(call.body.text).endsWith(`–${total} of ${total}`),
        60_000,
        since,
      );
      const seconds = (performance.now() - started) / 1000;
      const calls = slack.calls.slice(since, last.index + 1).filter((c) => c.method.startsWith('chat.'));
      const summary = slack.channelView(CHANNEL).at(-1);
      const lines = summary
        ? slack
            .thread(CHANNEL, summary.ts)
            .flatMap((m) => (m.blocks as Array<{ text: { text: string } }>).map((b) => b.text.text))
            .join('\n')
            .split('\n').length
        : 0;
      if (lines !== MACHINES) throw new Error(`look ${look}: ${lines} change lines in the thread`);
      rows.push({
        case: `look ${look + 1}: ${MACHINES} machines ${stop ? 'stopped' : 'started'}`,
        slack_calls: calls.length,
        seconds: round(seconds, 2),
        lines_in_thread: lines,
      });
    }
    const worstCalls = Math.max(...rows.map((r) => Number(r.slack_calls)));
    const worstSeconds = Math.max(...rows.map((r) => Number(r.seconds)));
    return {
      name: 'grouped',
      description: `A look finding ${MACHINES} machines changed, from the look to the last change in the channel's thread, Slack's pace of one call a second per channel`,
      iterations: looks,
      rows,
      summary: { worst_slack_calls: worstCalls, worst_seconds: worstSeconds },
      targets: [
        atMost('7a grouped: 1,000 changes in one look, Slack calls to reach the channel', worstCalls, 5),
        atMost('7b grouped: 1,000 changes in one look, seconds to reach the channel (s)', worstSeconds, 10),
      ],
    };
  } finally {
    await worker.close();
    await queue.close();
    await cloud.close();
    redis.disconnect();
    workerRedis.disconnect();
    await slack.close();
    await sim.close();
    await redisServer.close();
  }
}
