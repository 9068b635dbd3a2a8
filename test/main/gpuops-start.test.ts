import { fileURLToPath } from 'node:url';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { FakeSlackApi } from '../../src/devkit/fake-slack-api.js';
import { QUEUE_NAME, QUEUE_PREFIX } from '../../src/jobs/queue.js';
import { type RunningSim, startSim } from '../../src/sim/start-sim.js';
import { type GpuopsProcess, redisDb, spawnGpuops, until } from '../support/gpuops-process.js';
import { postSigned, ResponseUrlServer, slashCommandBody } from '../support/slack-driver.js';

const UNPRICED_POLICY = fileURLToPath(new URL('../fixtures/policy-unpriced.yaml', import.meta.url));

// `gpuops start` as an operator runs it: a child process configured only by its environment, against
// the simulator, the fake Slack Web API and a real Redis (a database index of its own, because the
// production queue name is fixed). Requests are signed as Slack signs them.

const SECRET = 'start-test-signing-secret';
const BOT_TOKEN = 'xoxb-start-test';
const CHANNEL = 'C0START';
const TYPE = 'h100-hgx-80gb.1x';
const DB = 5;

let sim: RunningSim;
let slack: FakeSlackApi;
let responses: ResponseUrlServer;
let redis: Redis;
let redisUrl: string;
let bot: GpuopsProcess;
let base: string;
let ops: string;

function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    SLACK_BOT_TOKEN: BOT_TOKEN,
    SLACK_SIGNING_SECRET: SECRET,
    SLACK_API_URL: slack.apiUrl,
    PORT: '0',
    OPS_PORT: '0',
    REDIS_URL: redisUrl,
    LOG_LEVEL: 'info',
    CLOUD_API_URL: sim.info.cloudUrl,
    CLOUD_API_SHAPE: 'B',
    // OAuth client credentials against the simulator's token server; the audience is given
    // explicitly because the simulator names its own.
    CLOUD_CLIENT_ID: sim.info.clientId,
    CLOUD_CLIENT_SECRET: sim.info.clientSecret,
    CLOUD_AUTH_URL: sim.info.authUrl,
    CLOUD_AUDIENCE: sim.info.cloudAudience,
    CLOUD_PROJECT_ID: sim.info.projectId,
    // Not a guardrails test: nothing waits for an approver over a price not (yet) known.
    GPUOPS_POLICY: UNPRICED_POLICY,
    PLATFORM_API_URL: sim.info.platformUrl,
    PLATFORM_API_KEY: sim.info.platformApiKey,
    ...extra,
  };
}

async function slash(text: string) {
  const responseUrl = responses.newUrl();
  const since = slack.mark();
  const response = await postSigned(
    `${base}/slack/events`,
    slashCommandBody({ text, responseUrl, channelId: CHANNEL }),
    { secret: SECRET },
  );
  return { response, responseUrl, since };
}

/** A state-changing request: its channel message, followed to its final version. */
async function channelJob(text: string, phase: 'Done' | 'Failed' = 'Done') {
  const { response, since } = await slash(text);
  expect(response.status).toBe(200);
  const posted = await slack.waitFor('chat.postMessage', (c) => c.body.channel === CHANNEL, 5_000, since);
  const ts = String((posted.response as { ts: string }).ts);
  await slack.waitFor(
    'chat.update',
    (c) => c.body.ts === ts && String(c.body.text).startsWith(`${phase}:`),
    20_000,
    since,
  );
  return { ts, message: slack.message(CHANNEL, ts)! };
}

/** The operations port (/healthz, /readyz, /metrics), which the Service does not expose. */
async function get(path: string) {
  const res = await request(`${ops}${path}`);
  return { status: res.statusCode, text: await res.body.text() };
}

beforeAll(async () => {
  sim = await startSim({ shape: 'B', port: 0, metrics: false, transitionMs: 400, log: () => {} });
  slack = await FakeSlackApi.start({ tokens: [BOT_TOKEN] });
  responses = await ResponseUrlServer.start();
  redisUrl = redisDb(inject('redisUrl'), DB);
  redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  await redis.flushdb();
  bot = spawnGpuops(['start'], env());
  const ready = await bot.waitForLog((r) => r.msg === 'gpuops ready', 30_000);
  expect(ready).toMatchObject({ role: 'all', socketMode: false, shape: 'B' });
  base = `http://127.0.0.1:${ready.port}`;
  ops = `http://127.0.0.1:${ready.opsPort}`;
}, 60_000);

afterAll(async () => {
  await bot?.kill();
  await redis?.flushdb().catch(() => {});
  redis?.disconnect();
  await responses?.close();
  await slack?.close();
  await sim?.close();
});

describe('gpuops start', () => {
  it('checks the bot token once at start and answers a signed /gpu ls privately', async () => {
    expect(slack.callsTo('auth.test')).toHaveLength(1);
    const { response, responseUrl } = await slash('ls');
    expect(response.status).toBe(200);
    expect(JSON.parse(response.text)).toMatchObject({ response_type: 'ephemeral' });
    const post = await responses.waitForPost((p) => responseUrl.endsWith(p.id), 10_000);
    expect(post.replaceOriginal).toBe(true);
    expect(String(post.body.text)).toMatch(/Instances \(0\)/);
    // Bolt was given the bot's ids: it never asks auth.test again before a listener.
    expect(slack.callsTo('auth.test')).toHaveLength(1);
  });

  it('answers /healthz and /readyz with 200 while Redis, the queue and the cloud answer', async () => {
    expect(await get('/healthz')).toMatchObject({ status: 200 });
    const ready = await get('/readyz');
    expect(ready.status).toBe(200);
    // The cloud and platform APIs are checked where the workers run: both answer here.
    expect(JSON.parse(ready.text)).toEqual({
      status: 'ready',
      checks: { redis: 'ok', queue: 'ok', cloud: 'ok', platform: 'ok', redis_maxmemory_policy: 'noeviction' },
    });
  });

  it('keeps /readyz and /metrics off the port Slack reaches; /healthz answers on both', async () => {
    expect(ops).not.toBe(base);
    const onPublic = async (path: string) => {
      const res = await request(`${base}${path}`);
      return { status: res.statusCode, text: await res.body.text() };
    };
    for (const path of ['/metrics', '/readyz']) {
      const res = await onPublic(path);
      expect(res.status).toBe(404);
      expect(res.text).not.toContain('gpuops_commands_total');
    }
    expect((await onPublic('/healthz')).status).toBe(200);
    expect(await get('/healthz')).toMatchObject({ status: 200 });
    expect((await get('/metrics')).text).toContain('gpuops_commands_total');
  });

  it('retries a simulator fault and shows one final answer, with the instance running', async () => {
    await channelJob(`create flaky-1 ${TYPE}`);
    await channelJob('stop flaky-1');
    sim.control.addFault({ operation: 'startInstance', status: 503, count: 2 });
    const { message } = await channelJob('start flaky-1');
    expect(message.text).toMatch(/flaky-1 is running at \d+\.\d+\.\d+\.\d+/);
    const finals = message.history.filter((v) => /^(Done|Failed):/.test(String(v.text)));
    expect(finals).toHaveLength(1);
    const instance = (await sim.control.state()).projects
      .flatMap((p) => (p as { instances: Array<{ name: string; state: string }> }).instances)
      .find((i) => i.name === 'flaky-1');
    expect(instance?.state).toBe('running');
    expect(sim.control.faults().every((f) => f.remaining === 0)).toBe(true);
  });

  it('posts its own message when the listener could not, and counts the Slack error', async () => {
    slack.failWith('chat.postMessage', 'not_in_channel', 1);
    const { response, responseUrl, since } = await slash(`project use ${sim.info.projectId}`);
    expect(response.status).toBe(200);
    // Told after the acknowledgement, through the response_url, what happened and what to do.
    const told = await responses.waitForPost((p) => responseUrl.endsWith(p.id), 10_000);
    expect(String(told.body.text)).toMatch(
      /invite @gpuops here, or use a public channel\. Your request is queued as job/,
    );
    // The job posts the one message itself and edits it to the end.
    const own = await slack.waitFor(
      'chat.postMessage',
      (c) => c.body.channel === CHANNEL && c.response?.ok === true,
      10_000,
      since,
    );
    const ts = String((own.response as { ts: string }).ts);
    // It ends in the answer: posted as it is when the job ends within its quiet period (no progress
    // to show first), else edited to it.
    await until(
      () => String(slack.message(CHANNEL, ts)?.text).startsWith('Done:'),
      'the job’s own message to say Done',
      10_000,
    );
    expect(slack.channelView(CHANNEL).filter((m) => String(m.text).includes('project use'))).toHaveLength(1);
  });

  it('counts commands, jobs, cloud calls (faults included) and their latency at /metrics', async () => {
    const { status, text } = await get('/metrics');
    expect(status).toBe(200);
    expect(text).toContain('gpuops_commands_total{subcommand="ls"} 1');
    expect(text).toContain('gpuops_commands_total{subcommand="start"} 1');
    expect(text).toContain('gpuops_jobs_total{name="ls",outcome="done"} 1');
    expect(text).toContain('gpuops_jobs_total{name="create",outcome="done"} 1');
    expect(text).toMatch(/gpuops_job_duration_seconds_bucket\{le="[\d.]+",name="create",outcome="done"\} 1/);
    expect(text).toContain(
      'gpuops_cloud_requests_total{api="infra",operation="startInstance",status="503"} 2',
    );
    expect(text).toContain(
      'gpuops_cloud_requests_total{api="infra",operation="startInstance",status="202"} 1',
    );
    expect(text).toMatch(
      /gpuops_cloud_request_duration_seconds_count\{api="infra",operation="listInstances",status="200"\} \d+/,
    );
    expect(text).toContain(
      'gpuops_slack_api_errors_total{method="chat.postMessage",error="not_in_channel"} 1',
    );
    expect(text).toMatch(/gpuops_queue_jobs\{state="waiting"\} 0/);
    expect(text).toContain('gpuops_info{role="all",shape="B",mode="http"} 1');
    expect(text).toContain('process_cpu_seconds_total');
  });

  it('on SIGTERM finishes the job in hand, then exits 0 within seconds, leaving nothing queued', async () => {
    const { since } = await slash(`create drain-1 ${TYPE}`);
    const posted = await slack.waitFor('chat.postMessage', (c) => c.body.channel === CHANNEL, 5_000, since);
    const ts = String((posted.response as { ts: string }).ts);
    // The job is in hand: the machine is being created and the worker polls for `running`.
    await slack.waitFor(
      'chat.update',
      (c) => c.body.ts === ts && String(c.body.text).startsWith('Waiting'),
      10_000,
      since,
    );
    const signalledAt = Date.now();
    bot.child.kill('SIGTERM');
    const exit = await bot.exited;
    expect(exit).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalledAt).toBeLessThan(10_000);
    const message = slack.message(CHANNEL, ts)!;
    expect(message.text).toMatch(/^Done: .*drain-1 is running/);
    expect(sim.control.createCount('createInstance', 'drain-1')).toBe(1);
    const queue = new Queue(QUEUE_NAME, { connection: redis, prefix: QUEUE_PREFIX });
    try {
      // Nothing of a request is left; only the job schedulers' next runs wait.
      const scheduled = new Set(['catalog.refresh', 'approvals.expire', 'requests.sweep']);
      const left = await queue.getJobs(['waiting', 'active', 'delayed', 'prioritized']);
      expect(left.filter((j) => !scheduled.has(j.name))).toEqual([]);
      const schedulers = await queue.getJobSchedulers();
      expect(schedulers.map((s) => s.key).sort()).toEqual([...scheduled].sort());
    } finally {
      await queue.close();
    }
    expect(bot.lines.some((l) => l.includes('"msg":"stopped"'))).toBe(true);
  });
});

describe('gpuops web and gpuops worker as separate processes', () => {
  it('share one Redis: the web process takes the request, the worker runs it, each serves its probes', async () => {
    await redis.flushdb();
    const { SLACK_SIGNING_SECRET: _, ...workerEnv } = env();
    const web = spawnGpuops(['web'], env());
    const worker = spawnGpuops(['worker'], workerEnv);
    try {
      const [webReady, workerReady] = await Promise.all([
        web.waitForLog((r) => r.msg === 'gpuops ready', 30_000),
        worker.waitForLog((r) => r.msg === 'gpuops ready', 30_000),
      ]);
      expect(webReady.role).toBe('web');
      expect(workerReady.role).toBe('worker');
      base = `http://127.0.0.1:${webReady.port}`;
      ops = `http://127.0.0.1:${webReady.opsPort}`;
      const { responseUrl } = await slash('ls');
      const post = await responses.waitForPost((p) => responseUrl.endsWith(p.id), 10_000);
      expect(String(post.body.text)).toMatch(/Instances \(\d+\)/);

      const workerBase = `http://127.0.0.1:${workerReady.opsPort}`;
      expect((await request(`${workerBase}/readyz`)).statusCode).toBe(200);
      // The answer is posted before the job is marked done, so the worker counts it a moment later.
      const jobsDone = 'gpuops_jobs_total{name="ls",outcome="done"} 1';
      const workerMetrics = await until(async () => {
        const text = await (await request(`${workerBase}/metrics`)).body.text();
        return text.includes(jobsDone) ? text : undefined;
      }, 'the worker to count the ls job as done').catch(
        async () => await (await request(`${workerBase}/metrics`)).body.text(),
      );
      expect(workerMetrics).toContain(jobsDone);
      expect((await request(`${workerBase}/slack/events`, { method: 'POST', body: '' })).statusCode).toBe(
        404,
      );
      const webMetrics = (await get('/metrics')).text;
      expect(webMetrics).toContain('gpuops_commands_total{subcommand="ls"} 1');
      expect(webMetrics).not.toContain('gpuops_jobs_total{');

      web.child.kill('SIGTERM');
      worker.child.kill('SIGTERM');
      expect((await web.exited).code).toBe(0);
      expect((await worker.exited).code).toBe(0);
    } finally {
      await web.kill();
      await worker.kill();
    }
  });
});

describe('gpuops start, signalled twice', () => {
  it('exits at once on a second signal while a job is still in hand', async () => {
    await redis.flushdb();
    const second = spawnGpuops(['start'], env());
    try {
      const ready = await second.waitForLog((r) => r.msg === 'gpuops ready', 30_000);
      base = `http://127.0.0.1:${ready.port}`;
      // The create hangs in the cloud, so the drain after the first signal would wait out its grace.
      sim.control.addFault({ operation: 'createInstance', latencyMs: 60_000, count: 1 });
      await slash(`create stuck-1 ${TYPE}`);
      const attempts = () => sim.control.creates().attempts.createInstance?.['stuck-1'] ?? 0;
      await until(() => attempts() === 1, 'the create to reach the simulator');
      second.child.kill('SIGTERM');
      await second.waitForLog((r) => r.msg === 'stopping: no new requests or jobs');
      const at = Date.now();
      second.child.kill('SIGTERM');
      expect((await second.exited).code).toBe(1);
      expect(Date.now() - at).toBeLessThan(2_000);
      expect(second.lines.some((l) => l.includes('second signal: exiting now'))).toBe(true);
    } finally {
      sim.control.clearFaults();
      await second.kill();
    }
  });
});

describe('gpuops start with a bad configuration', () => {
  it("exits 1 naming a missing key, and never its neighbours' values", async () => {
    const { SLACK_BOT_TOKEN: _, ...rest } = env();
    const child = spawnGpuops(['start'], rest);
    const exit = await child.exited;
    expect(exit.code).toBe(1);
    expect(child.stderr()).toContain('SLACK_BOT_TOKEN: required');
    expect(child.stderr()).not.toContain(sim.info.clientSecret);
  });

  it('exits 1 with a clear sentence when Slack refuses the bot token', async () => {
    const child = spawnGpuops(['start'], env({ SLACK_BOT_TOKEN: 'xoxb-wrong', PORT: '0', OPS_PORT: '0' }));
    const exit = await child.exited;
    expect(exit.code).toBe(1);
    expect(child.stderr()).toContain('Slack refused SLACK_BOT_TOKEN (invalid_auth)');
    expect(child.stderr()).not.toContain('xoxb-wrong');
  });

  it('exits 1 when Redis cannot be reached, naming REDIS_URL without its password', async () => {
    const child = spawnGpuops(['start'], env({ REDIS_URL: 'redis://:hunter2@127.0.0.1:1/0' }));
    const exit = await child.exited;
    expect(exit.code).toBe(1);
    expect(child.stderr()).toMatch(/Could not reach Redis at redis:\/\/127\.0\.0\.1:1\/0 .*check REDIS_URL/);
    expect(child.stderr()).not.toContain('hunter2');
  });
});
