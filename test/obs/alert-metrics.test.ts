import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBotMetrics, METRIC_NAMES } from '../../src/obs/bot-metrics.js';
import { healthRoutes, type ProbeDeps, readiness } from '../../src/obs/health-routes.js';
import { startRouteServer } from '../../src/obs/route-server.js';
import { parsePolicy } from '../../src/policy/load-policy.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/sys/private-redis.js';
import { askForApproval, messageWhen, primeCatalog, REQUEST_CHANNEL } from '../e2e/guardrails-kit.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { until } from '../support/until.js';

// The series the shipped alert rules read (deploy/prometheus/gpuops.rules.yaml) are exported by a
// running bot, at its /metrics, as the events happen: how long Slack waited for each answer, whether
// the bot is ready, degraded mode on a replicated Redis, and what the request sweeper repaired.

const APPROVALS = 'C0APPROVE';
const POLICY = parsePolicy(`
default_role: viewer
roles:
  operator: { users: [U0ADA, U0BOB] }
approvals:
  threshold_per_hour: 10
  approvers: { users: [U0BOB] }
  channel: ${APPROVALS}
  expires_after: 1h
`);

/** One sample of the exposition: the value of `name{labels}` exactly, or undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('the series the alert rules read, from a running bot', () => {
  let stack: BotStack;
  let replica: PrivateRedis | undefined;
  const scrape = async () => (await request(`http://127.0.0.1:${stack.bot.opsPort}/metrics`)).body.text();
  const startReplica = async () => {
    const port = new URL(stack.redisUrl).port;
    replica = await startPrivateRedis({ extraArgs: ['--replicaof', '127.0.0.1', port] });
    await until('the replica to follow the primary', async () =>
      /slave\d+:.*state=online/.test(await stack.redis.info('replication')) ? true : undefined,
    );
  };

  beforeAll(async () => {
    // Every change must reach one replica, as on Sentinel or Cluster.
    stack = await startBotStack({
      shape: 'B',
      policy: POLICY,
      env: { REDIS_WAIT_REPLICAS: '1', REDIS_WAIT_MS: '200' },
    });
    await startReplica();
    await primeCatalog(stack);
  });
  afterAll(async () => {
    await replica?.close();
    await stack?.close();
  });

  it('times each answer to Slack, and says the bot is ready and not in degraded mode', async () => {
    const before = await scrape();
    const count = `${METRIC_NAMES.slackAck}_count`;
    const ls = await stack.command('ls', { userId: 'U0ADA' });
    await ls.answer();
    const after = await until('the answer to be timed', async () => {
      const text = await scrape();
      return (sample(text, count) ?? 0) > (sample(before, count) ?? 0) ? text : undefined;
    });
    // Answered well within Slack's 3 s: the request falls in the 3 s bucket.
    expect(sample(after, `${METRIC_NAMES.slackAck}_bucket{le="3"}`)).toBe(sample(after, count));
    expect(sample(after, METRIC_NAMES.ready)).toBe(1);
    expect(sample(after, METRIC_NAMES.degradedMode)).toBe(0);
  });

  it('shows an approval waiting, and counts the approved request the sweeper had to queue', async () => {
    const pending = await askForApproval(stack, 'create swept-1 h100-hgx-80gb.8x', {
      userId: 'U0ADA',
      approvalChannel: APPROVALS,
    });
    // Read from Redis at scrape time: a scrape on a starved machine may miss it once, never show 0.
    const waiting = await until('the approval to show as waiting', async () => {
      const text = await scrape();
      return sample(text, `${METRIC_NAMES.approvalsWaiting}{stage="decision"}`) === undefined
        ? undefined
        : text;
    });
    expect(sample(waiting, `${METRIC_NAMES.approvalsWaiting}{stage="decision"}`)).toBe(1);
    expect(sample(waiting, `${METRIC_NAMES.approvalsWaiting}{stage="queue"}`)).toBe(0);
    // The decision is stored and nothing after it happens: as if the listener died right then.
    await stack.guardrails.approvals.decide(pending.approvalId, {
      state: 'approved',
      by: 'U0BOB',
      at: Date.now() - 20_000,
      runBy: Date.now() + 60_000,
    });
    await messageWhen(stack, REQUEST_CHANNEL, pending.requesterTs!, /^Done:/, 30_000);
    const after = await scrape();
    expect(sample(after, `${METRIC_NAMES.swept}{outcome="queued"}`)).toBe(1);
    expect(sample(after, `${METRIC_NAMES.approvalsWaiting}{stage="decision"}`)).toBe(0);
    expect(sample(after, `${METRIC_NAMES.approvalsWaiting}{stage="queue"}`)).toBe(0);
  }, 60_000);

  it('shows degraded mode while Redis has no replica, and its end once one is back', async () => {
    await replica!.close();
    replica = undefined;
    await until('gpuops_degraded_mode to be 1', async () =>
      sample(await scrape(), METRIC_NAMES.degradedMode) === 1 ? true : undefined,
    );
    // Degraded, yet still ready: the listener answers people.
    expect(sample(await scrape(), METRIC_NAMES.ready)).toBe(1);
    await startReplica();
    await until('gpuops_degraded_mode to be 0', async () =>
      sample(await scrape(), METRIC_NAMES.degradedMode) === 0 ? true : undefined,
    );
  }, 30_000);
});

describe('gpuops_ready', () => {
  it('is 0 while /readyz answers 503 (Redis does not answer) and 1 once it answers again', async () => {
    let redisUp = false;
    const metrics = createBotMetrics({ defaultMetrics: false });
    const deps: ProbeDeps = {
      redisPing: async () => {
        if (!redisUp) throw new Error('Connection is closed.');
        return 'PONG';
      },
      queueCheck: async () => ({}),
      metrics,
      shuttingDown: () => false,
      timeoutMs: 100,
    };
    metrics.watchReadiness(async () => (await readiness(deps)).status === 200);
    const server = await startRouteServer(healthRoutes(deps), 0, '127.0.0.1');
    const get = async (path: string) => {
      const res = await request(`http://127.0.0.1:${server.port}${path}`);
      return { status: res.statusCode, text: await res.body.text() };
    };
    try {
      expect((await get('/readyz')).status).toBe(503);
      expect(sample((await get('/metrics')).text, METRIC_NAMES.ready)).toBe(0);
      redisUp = true;
      expect((await get('/readyz')).status).toBe(200);
      expect(sample((await get('/metrics')).text, METRIC_NAMES.ready)).toBe(1);
    } finally {
      await server.close();
    }
  });
});
