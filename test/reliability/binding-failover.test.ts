import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStore } from '../../src/store/store.js';
import { until } from '../support/gpuops-process.js';
import type { Bot, Rig } from './support/reliability-rig.js';
import { slash, startRig } from './support/reliability-rig.js';
import { MASTER, type SentinelSet, startSentinelSet } from './support/sentinel.js';

// The channel's binding kept in the listener's process (src/store/binding-cache.ts) across a Sentinel
// failover. The replica is given a binding of its own that the primary never had (writable for the
// test, so no invalidation can reach the bot), then the primary is killed: once the sentinels promote
// the replica, the next request that reads a binding must read the new primary's, never the one the
// process kept from the old primary.

const CHANNEL = 'C0FAILOVER';

describe('Redis Sentinel: the cached channel binding after a failover', () => {
  let set: SentinelSet;
  let rig: Rig;
  let bot: Bot;
  let redis: Redis;
  let replica: Redis;

  beforeAll(async () => {
    set = await startSentinelSet();
    rig = await startRig();
    const env = { REDIS_SENTINELS: set.sentinels, REDIS_SENTINEL_MASTER: MASTER };
    bot = await rig.start('web', { env });
    redis = set.connect();
    replica = new Redis(set.replica.url, { maxRetriesPerRequest: 1 });
    replica.on('error', () => {});
    await bot.parts.bindings?.ready();
  }, 120_000);

  afterAll(async () => {
    redis?.disconnect();
    replica?.disconnect();
    await rig?.close();
    await set?.close();
  });

  const projectAnswer = async () => {
    const sent = await slash(rig, bot.url, 'project', { channelId: CHANNEL });
    if (sent.response.status !== 200) return `HTTP ${sent.response.status}`;
    return String((sent.response.json() as { text?: string }).text ?? '');
  };

  it('reads the new primary’s binding, not the one kept from the old primary', async () => {
    expect(bot.parts.bindings?.tracking, 'the bot keeps bindings in the process').toBe(true);
    const store = createStore(redis);
    await store.bindProject(CHANNEL, { projectId: 'before-failover', boundBy: 'U0ADMIN', boundAt: 1 });
    expect(await projectAnswer()).toContain('`before-failover`');
    expect(await projectAnswer()).toContain('`before-failover`');

    // What only the replica holds: written there directly, the primary (and the bot) never hear of it.
    await until(
      async () => ((await replica.get(`gpuops:channel:${CHANNEL}:project`)) !== null ? true : undefined),
      'the replica to hold the binding',
      10_000,
    );
    await replica.config('SET', 'replica-read-only', 'no');
    await createStore(replica).bindProject(CHANNEL, {
      projectId: 'after-failover',
      boundBy: 'U0ADMIN',
      boundAt: 2,
    });

    const firstPrimary = await set.primaryPort();
    await set.primary.kill();
    await until(
      async () => ((await set.primaryPort().catch(() => firstPrimary)) !== firstPrimary ? true : undefined),
      'the sentinels to promote the replica',
      60_000,
    );
    // Until the bot reaches the new primary its answers may be errors; none may name the old binding.
    const answers: string[] = [];
    const answered = await until(
      async () => {
        const text = await projectAnswer();
        answers.push(text);
        return text.includes('This channel works in project') ? text : undefined;
      },
      'the bot to answer from the new primary',
      60_000,
    );
    expect(answers.filter((a) => a.includes('before-failover'))).toEqual([]);
    expect(answered).toContain('`after-failover`');
    // And it keeps bindings in the process again, on the new primary.
    await bot.parts.bindings?.ready();
    await createStore(redis).bindProject(CHANNEL, { projectId: 'rebound', boundBy: 'U0ADMIN', boundAt: 3 });
    expect(await projectAnswer()).toContain('`rebound`');
  });
});
