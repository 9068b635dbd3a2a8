import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningBot, startBot } from '../../src/app/start-bot.js';
import type { Config } from '../../src/config.js';
import { FakeSlackApi } from '../../src/devkit/fake-slack-api.js';
import { QUEUE_NAME, QUEUE_PREFIX } from '../../src/jobs/queue.js';
import { createLogger } from '../../src/log/logger.js';
import { type RunningSim, startSim } from '../../src/sim/start-sim.js';
import { singleBotConfig } from '../support/bot-config.js';
import { redisDb } from '../support/gpuops-process.js';
import { postSigned, slashCommandBody } from '../support/slack-driver.js';

// Shutdown with a job that outlives the grace period: the worker releases it (BullMQ records the
// attempt and schedules the job again) and stops; another worker picks it up and resumes from its
// saved progress. Nothing is lost and nothing is done twice.

const SECRET = 'shutdown-secret';
const BOT_TOKEN = 'xoxb-shutdown';
const CHANNEL = 'C0STOP';
const DB = 7;
const log = createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

describe('shutdown with a job still running after the grace period', () => {
  let sim: RunningSim;
  let slack: FakeSlackApi;
  let redis: Redis;
  let config: Config;
  const bots: RunningBot[] = [];

  beforeAll(async () => {
    // Machines take 3 s to come up: longer than the grace period below.
    sim = await startSim({ shape: 'B', port: 0, metrics: false, transitionMs: 3_000, log: () => {} });
    slack = await FakeSlackApi.start({ tokens: [BOT_TOKEN] });
    const redisUrl = redisDb(inject('redisUrl'), DB);
    redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    await redis.flushdb();
    // Not a guardrails test: nothing waits for an approver over a price not (yet) known.
    config = singleBotConfig({
      secret: SECRET,
      token: BOT_TOKEN,
      slackApiUrl: slack.apiUrl,
      redisUrl,
      sim: sim.info,
    });
  });

  afterAll(async () => {
    await Promise.all(bots.map((b) => b.stop()));
    await redis?.flushdb().catch(() => {});
    redis?.disconnect();
    await slack?.close();
    await sim?.close();
  });

  const start = async (role: 'all' | 'worker') => {
    const bot = await startBot(config, {
      role,
      log,
      host: '127.0.0.1',
      shutdownGraceMs: 300,
      workerTiming: { pollStartMs: 100, pollMaxMs: 200 },
    });
    bots.push(bot);
    return bot;
  };

  it('releases the job to the next worker, which finishes it without a second machine', async () => {
    const first = await start('all');
    const since = slack.mark();
    const response = await postSigned(
      `http://127.0.0.1:${first.port}/slack/events`,
      slashCommandBody({ text: 'create slow-1 h100-hgx-80gb.1x', channelId: CHANNEL }),
      { secret: SECRET },
    );
    expect(response.status).toBe(200);
    const posted = await slack.waitFor('chat.postMessage', (c) => c.body.channel === CHANNEL, 5_000, since);
    const ts = String((posted.response as { ts: string }).ts);
    await slack.waitFor(
      'chat.update',
      (c) => c.body.ts === ts && String(c.body.text).startsWith('Waiting'),
      5_000,
      since,
    );

    const stoppingAt = Date.now();
    await first.stop();
    expect(Date.now() - stoppingAt).toBeLessThan(3_000);
    expect(slack.message(CHANNEL, ts)!.text).not.toMatch(/^(Done|Failed):/);

    // Released, not lost: the job waits for a worker, with its progress (the machine's id) saved.
    const queue = new Queue(QUEUE_NAME, { connection: redis, prefix: QUEUE_PREFIX });
    try {
      const requests = async (states: Array<'waiting' | 'delayed' | 'active' | 'failed'>) =>
        // A person's request carries a command; the bot's own scheduled jobs (catalogue, expiry, sweep) do not.
        (await queue.getJobs(states)).filter((j) => 'command' in (j.data as object));
      expect(await requests(['active', 'failed'])).toEqual([]);
      const waiting = await requests(['waiting', 'delayed']);
      expect(waiting).toHaveLength(1);
      expect(waiting[0]?.data.progress).toMatchObject({ sent: true, instanceId: expect.any(String) });
    } finally {
      await queue.close();
    }

    await start('worker');
    await slack.waitFor(
      'chat.update',
      (c) => c.body.ts === ts && /^(Done|Failed):/.test(String(c.body.text)),
      15_000,
      since,
    );
    const message = slack.message(CHANNEL, ts)!;
    expect(message.text).toMatch(/^Done: .*slow-1 is running/);
    expect(message.history.some((v) => /attempt 2 of/.test(JSON.stringify(v)))).toBe(true);
    expect(sim.control.createCount('createInstance', 'slow-1')).toBe(1);
  });
});
