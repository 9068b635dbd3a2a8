import { Redis } from 'ioredis';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { type RunningBot, startBot } from '../../src/app/start-bot.js';
import { FakeSlackApi } from '../../src/devkit/fake-slack-api.js';
import { createQueue } from '../../src/jobs/queue.js';
import { createLogger } from '../../src/log/logger.js';
import { type RunningSim, startSim } from '../../src/sim/start-sim.js';
import { REDIS_FULL } from '../../src/store/redis-full.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/sys/private-redis.js';
import { singleBotConfig } from '../support/bot-config.js';
import { postSigned, slashCommandBody } from '../support/slack-driver.js';

// A Redis that is full. With `noeviction` (what gpuops asks for) Redis refuses writes: the listener
// refuses the new request with a sentence for the operator, queues nothing, and every request it had
// accepted before stays queued. With an evicting policy, gpuops warns at start and /readyz says so.

const SECRET = 'redis-full-secret';
const BOT_TOKEN = 'xoxb-redis-full';
const CHANNEL = 'C0FULL';

interface Running {
  readonly redis: PrivateRedis;
  readonly bot: RunningBot;
  readonly lines: string[];
}

describe('a full Redis', () => {
  let sim: RunningSim;
  let slack: FakeSlackApi;
  const running: Running[] = [];

  async function start(redisArgs: string[]): Promise<Running> {
    sim ??= await startSim({ shape: 'B', port: 0, metrics: false, transitionMs: 200, log: () => {} });
    slack ??= await FakeSlackApi.start({ tokens: [BOT_TOKEN] });
    const redis = await startPrivateRedis({ extraArgs: redisArgs });
    const lines: string[] = [];
    const config = singleBotConfig({
      secret: SECRET,
      token: BOT_TOKEN,
      slackApiUrl: slack.apiUrl,
      redisUrl: redis.url,
      sim: sim.info,
    });
    // The listener only: accepted requests stay in the queue, where the test can count them.
    const bot = await startBot(config, {
      role: 'web',
      host: '127.0.0.1',
      shutdownGraceMs: 1_000,
      log: createLogger({ level: 'info', destination: { write: (line: string) => lines.push(line) } }),
    });
    const run = { redis, bot, lines };
    running.push(run);
    return run;
  }

  afterAll(async () => {
    for (const r of running) {
      await r.bot.stop();
      await r.redis.close();
    }
    await slack?.close();
    await sim?.close();
  });

  const slash = (bot: RunningBot, text: string) =>
    postSigned(`http://127.0.0.1:${bot.port}/slack/events`, slashCommandBody({ text, channelId: CHANNEL }), {
      secret: SECRET,
    });
  const readyz = async (bot: RunningBot) => {
    const res = await request(`http://127.0.0.1:${bot.opsPort}/readyz`);
    return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
  };

  it('refuses new requests with a sentence for the operator, and keeps every request it accepted', async () => {
    const { redis, bot, lines } = await start(['--maxmemory', '8mb', '--maxmemory-policy', 'noeviction']);
    expect(lines.some((l) => l.includes('evicts keys when full'))).toBe(false);
    expect((await readyz(bot)).body).toMatchObject({ checks: { redis_maxmemory_policy: 'noeviction' } });
    const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    const queue = createQueue(client);
    try {
      const accepted = await slash(bot, 'create kept-1 h100-hgx-80gb.1x');
      expect(accepted.status).toBe(200);
      expect(accepted.text).not.toContain('full');
      const count = async () =>
        Object.values(await queue.getJobCounts('waiting', 'delayed', 'prioritized')).reduce(
          (a, b) => a + b,
          0,
        );
      const before = await count();

      // Fill Redis up to its maxmemory, as a week of traffic with nothing expiring would: big values,
      // then smaller ones until even a small write is refused.
      for (let i = 0, size = 256 * 1024; size >= 64; i++) {
        if (i > 10_000) throw new Error('Redis never filled up');
        const refusedWrite = await client.set(`filler:${i}`, 'x'.repeat(size)).then(
          () => false,
          (err: Error) => /^OOM/.test(err.message),
        );
        if (refusedWrite) size = Math.floor(size / 8);
      }
      // Full stays full: memory freed after the last refused write (buffers, BullMQ's own keys) could
      // let the request's few small writes through, so the limit goes well below what Redis holds.
      const used = Number(/used_memory:(\d+)/.exec(await client.info('memory'))?.[1]);
      await client.config('SET', 'maxmemory', String(Math.floor(used / 2)));

      const refused = await slash(bot, 'create refused-1 h100-hgx-80gb.1x');
      expect(refused.status).toBe(200);
      expect((refused.json() as { text: string }).text).toBe(REDIS_FULL);
      // Nothing queued for it, nothing lost of what was there.
      expect(await count()).toBe(before);
      const jobs = await queue.getJobs(['waiting', 'delayed', 'prioritized']);
      const names = jobs.map((j) => (j.data as { command?: { name?: string } }).command?.name);
      expect(names.filter((n) => n !== undefined)).toEqual(['kept-1']);
      expect(slack.calls.some((c) => String(c.body.text ?? '').includes('refused-1'))).toBe(false);

      // Room again (the operator raised maxmemory or keys expired): requests are taken again.
      await client.config('SET', 'maxmemory', '0');
      const again = await slash(bot, 'create again-1 h100-hgx-80gb.1x');
      expect(again.text === '' || !String((again.json() as { text?: string }).text).includes('full')).toBe(
        true,
      );
      expect(await count()).toBe(before + 1);
    } finally {
      await queue.close();
      client.disconnect();
    }
  });

  it('warns at start and in /readyz when Redis would evict keys', async () => {
    const { bot, lines } = await start(['--maxmemory', '64mb', '--maxmemory-policy', 'allkeys-lru']);
    const warning = lines
      .map((l) => JSON.parse(l) as { level: number; msg: string })
      .find((l) => l.msg.includes('evicts keys when full'));
    expect(warning?.level).toBe('warn');
    expect(warning?.msg).toContain('maxmemory-policy allkeys-lru');
    expect(warning?.msg).toContain('Set maxmemory-policy noeviction');
    const ready = await readyz(bot);
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({
      status: 'degraded',
      checks: { redis_maxmemory_policy: 'allkeys-lru' },
    });
    expect(String(ready.body.reason)).toContain('set noeviction');
  });
});
