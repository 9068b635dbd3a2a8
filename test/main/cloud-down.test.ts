import { createServer, connect as netConnect, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { FakeSlackApi } from '../../src/devkit/fake-slack-api.js';
import { type RunningSim, startSim } from '../../src/sim/start-sim.js';
import { type GpuopsProcess, redisDb, spawnGpuops, until } from '../support/gpuops-process.js';
import { postSigned, ResponseUrlServer, slashCommandBody } from '../support/slack-driver.js';

const UNPRICED_POLICY = fileURLToPath(new URL('../fixtures/policy-unpriced.yaml', import.meta.url));

// `gpuops start` with CLOUD_API_URL pointing at a port where nothing listens, as an operator with a
// typo (or a cloud that is down) runs it: it starts and says what to check, /readyz says "degraded"
// with 200 (the listener still answers), and a `/gpu ls` is told within seconds that the cloud did not
// answer and that the same message will be updated: with a clear failure once the retries run out, or
// with the real answer once the cloud is back (a TCP forwarder opened on that port to the simulator).

const SECRET = 'cloud-down-signing-secret';
const BOT_TOKEN = 'xoxb-cloud-down';
const CHANNEL = 'C0DOWN';
const DB = 8;
const NOTICE = /The cloud API did not answer: retrying in the background.*I will update this message/;

let sim: RunningSim;
let slack: FakeSlackApi;
let responses: ResponseUrlServer;
let redis: Redis;
let bot: GpuopsProcess;
let base: string;
let ops: string;
let cloudPort: number;
let forwarder: Server | undefined;

/** A port nothing listens on (the kernel's pick, released at once). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The cloud comes up: the port of CLOUD_API_URL now reaches the simulator. */
async function cloudComesUp(simPort: number): Promise<void> {
  forwarder = createServer((socket) => {
    const upstream = netConnect(simPort, '127.0.0.1');
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => forwarder!.listen(cloudPort, '127.0.0.1', resolve));
}

async function slash(text: string) {
  const responseUrl = responses.newUrl();
  const response = await postSigned(
    `${base}/slack/events`,
    slashCommandBody({ text, responseUrl, channelId: CHANNEL }),
    { secret: SECRET },
  );
  expect(response.status).toBe(200);
  return { responseUrl, id: responseUrl.split('/').at(-1) };
}

async function readyz() {
  const res = await request(`${ops}/readyz`);
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  sim = await startSim({ shape: 'B', port: 0, metrics: false, transitionMs: 400, log: () => {} });
  slack = await FakeSlackApi.start({ tokens: [BOT_TOKEN] });
  responses = await ResponseUrlServer.start();
  const redisUrl = redisDb(inject('redisUrl'), DB);
  redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  await redis.flushdb();
  cloudPort = await closedPort();
  bot = spawnGpuops(['start'], {
    SLACK_BOT_TOKEN: BOT_TOKEN,
    SLACK_SIGNING_SECRET: SECRET,
    SLACK_API_URL: slack.apiUrl,
    PORT: '0',
    OPS_PORT: '0',
    REDIS_URL: redisUrl,
    LOG_LEVEL: 'info',
    CLOUD_API_URL: `http://127.0.0.1:${cloudPort}/api/v1alpha1`,
    CLOUD_API_SHAPE: 'B',
    CLOUD_API_TOKEN: sim.info.cloudToken,
    CLOUD_PROJECT_ID: sim.info.projectId,
    // The platform API answers: /readyz names each API's state on its own.
    PLATFORM_API_URL: sim.info.platformUrl,
    PLATFORM_API_KEY: sim.info.platformApiKey,
    GPUOPS_POLICY: UNPRICED_POLICY,
  });
  const ready = await bot.waitForLog((r) => r.msg === 'gpuops ready', 30_000);
  base = `http://127.0.0.1:${ready.port}`;
  ops = `http://127.0.0.1:${ready.opsPort}`;
}, 60_000);

afterAll(async () => {
  await bot?.kill();
  await new Promise<void>((resolve) => (forwarder ? forwarder.close(() => resolve()) : resolve()));
  await redis?.flushdb().catch(() => {});
  redis?.disconnect();
  await responses?.close();
  await slack?.close();
  await sim?.close();
});

describe('gpuops start with a cloud that does not answer', () => {
  it('starts anyway, with a warning that names CLOUD_API_URL and no secret', async () => {
    const warning = await bot.waitForLog((r) => r.dependency === 'cloud' && r.state === 'unreachable');
    expect(warning.level).toBe('warn');
    expect(String(warning.msg)).toMatch(
      new RegExp(`cloud API at http://127\\.0\\.0\\.1:${cloudPort}/api/v1alpha1 did not answer`),
    );
    expect(String(warning.msg)).toMatch(/check CLOUD_API_URL and that the service is up/);
    const ready = await bot.waitForLog((r) => r.msg === 'gpuops ready');
    expect(ready.dependencies).toEqual({ cloud: 'unreachable', platform: 'ok' });
    const output = bot.lines.join('\n') + bot.stderr();
    for (const secret of [sim.info.cloudToken, sim.info.platformApiKey, SECRET, BOT_TOKEN]) {
      expect(output).not.toContain(secret);
    }
  });

  it('answers /readyz with 200 "degraded", naming the cloud and what to check', async () => {
    const { status, body } = await readyz();
    expect(status).toBe(200);
    expect(body).toMatchObject({
      status: 'degraded',
      checks: {
        redis: 'ok',
        queue: 'ok',
        cloud: 'unreachable',
        platform: 'ok',
        redis_maxmemory_policy: 'noeviction',
      },
    });
    expect(String(body.reason)).toMatch(/The cloud API at .* did not answer .*check CLOUD_API_URL/);
  });

  it('tells a /gpu ls within seconds that it retries, then edits that answer with what to check', async () => {
    const since = slack.mark();
    const { responseUrl, id } = await slash('ls');
    // A channel request at the same time: its message in the channel says the same and ends the same.
    await slash('stop train-1');
    const notice = await responses.waitForPost(
      (p) => p.id === id && NOTICE.test(String(p.body.text)),
      10_000,
    );
    expect(notice.replaceOriginal).toBe(true);
    const posted = await slack.waitFor('chat.postMessage', (c) => c.body.channel === CHANNEL, 5_000, since);
    const ts = String((posted.response as { ts: string }).ts);
    await slack.waitFor(
      'chat.update',
      (c) => c.body.ts === ts && NOTICE.test(String(c.body.text)),
      10_000,
      since,
    );
    const final = await responses.waitForPost(
      (p) => p.id === id && /gave up after 6 attempts/.test(String(p.body.text)),
      120_000,
    );
    expect(final.replaceOriginal).toBe(true);
    expect(String(final.body.text)).toMatch(/The cloud API did not answer \(ECONNREFUSED\)/);
    expect(String(final.body.text)).toMatch(/check CLOUD_API_URL/);
    // One notice and one final answer: well within the five uses Slack allows a response_url.
    expect(responses.postsTo(responseUrl).map((p) => NOTICE.test(String(p.body.text)))).toEqual([
      true,
      false,
    ]);
    expect(responses.violations).toEqual([]);
    await slack.waitFor(
      'chat.update',
      (c) => c.body.ts === ts && /^Failed: .*gave up after 6 attempts/.test(String(c.body.text)),
      30_000,
      since,
    );
    const versions = slack.message(CHANNEL, ts)!.history.map((v) => String(v.text));
    expect(versions.filter((t) => t.startsWith('Failed:'))).toHaveLength(1);
  }, 150_000);

  it('edits the same answer with the real list once the cloud comes up, and /readyz is ready again', async () => {
    const { responseUrl, id } = await slash('ls');
    await responses.waitForPost((p) => p.id === id && NOTICE.test(String(p.body.text)), 10_000);
    await cloudComesUp(Number(new URL(sim.info.cloudUrl).port));
    const final = await responses.waitForPost(
      (p) => p.id === id && /Instances \(0\)/.test(String(p.body.text)),
      60_000,
    );
    expect(final.replaceOriginal).toBe(true);
    expect(responses.postsTo(responseUrl)).toHaveLength(2);
    await until(async () => (await readyz()).body.status === 'ready', '/readyz to say ready', 40_000);
    expect((await readyz()).body).toEqual({
      status: 'ready',
      checks: { redis: 'ok', queue: 'ok', cloud: 'ok', platform: 'ok', redis_maxmemory_policy: 'noeviction' },
    });
    await bot.waitForLog((r) => r.dependency === 'cloud' && r.msg === 'The cloud API answers again');
  }, 90_000);
});
