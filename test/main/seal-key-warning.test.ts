import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningBot, startBot } from '../../src/app/start-bot.js';
import { parseConfig } from '../../src/config.js';
import { FakeSlackApi } from '../../src/devkit/fake-slack-api.js';
import { createLogger } from '../../src/log/logger.js';
import { type RunningSim, startSim } from '../../src/sim/start-sim.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/sys/private-redis.js';
import { singleBotConfig } from '../support/bot-config.js';

// Without GPUOPS_SEAL_KEY the key that seals form secrets in Redis comes from the bot token: the
// operator is told so at start, once, as a warning, and not told when the key is set.

const BOT_TOKEN = 'xoxb-seal-warning';

describe('the sealing key at start-up', () => {
  let sim: RunningSim;
  let slack: FakeSlackApi;
  let redis: PrivateRedis;
  const bots: RunningBot[] = [];

  beforeAll(async () => {
    sim = await startSim({ shape: 'B', port: 0, metrics: false, transitionMs: 200, log: () => {} });
    slack = await FakeSlackApi.start({ tokens: [BOT_TOKEN] });
    redis = await startPrivateRedis();
  });
  afterAll(async () => {
    for (const bot of bots) await bot.stop();
    await redis?.close();
    await slack?.close();
    await sim?.close();
  });

  /** The log lines of a listener started with these extra settings, up to `gpuops ready`. */
  async function startLines(extra: Record<string, string>): Promise<Array<{ level: string; msg: string }>> {
    const lines: string[] = [];
    const base = singleBotConfig({
      secret: 'seal-warning-secret',
      token: BOT_TOKEN,
      slackApiUrl: slack.apiUrl,
      redisUrl: redis.url,
      sim: sim.info,
    });
    const env = Object.fromEntries(
      Object.entries(base)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => [k, String(v)]),
    );
    const config = parseConfig({ ...env, ...extra }, 'bot');
    bots.push(
      await startBot(config, {
        role: 'web',
        host: '127.0.0.1',
        shutdownGraceMs: 1_000,
        log: createLogger({ level: 'info', destination: { write: (line: string) => lines.push(line) } }),
      }),
    );
    return lines.map((l) => JSON.parse(l) as { level: string; msg: string });
  }

  it('warns when the key is derived from the bot token', async () => {
    const lines = await startLines({});
    const warnings = lines.filter((l) => l.msg.startsWith('GPUOPS_SEAL_KEY is not set'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.level).toBe('warn');
    expect(warnings[0]!.msg).toContain('Set GPUOPS_SEAL_KEY to 32 random bytes');
    expect(JSON.stringify(lines)).not.toContain(BOT_TOKEN);
  });

  it('says nothing of it when GPUOPS_SEAL_KEY is set', async () => {
    const lines = await startLines({ GPUOPS_SEAL_KEY: randomBytes(32).toString('hex') });
    expect(lines.some((l) => l.msg.includes('gpuops ready'))).toBe(true);
    expect(lines.some((l) => l.msg.includes('GPUOPS_SEAL_KEY'))).toBe(false);
  });
});
