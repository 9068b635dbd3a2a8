import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStore, type Store } from '../../src/store/store.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';

// The channel's project binding kept in the listener's process, kept true by Redis' client-side
// caching (src/store/binding-cache.ts): read once, then answered from the process; a binding changed
// by another replica is seen by the next request; when the invalidation connection drops, nothing is
// answered from the process until tracking is back. Real Redis, real bot (web role), signed requests.

describe('the channel binding kept in the process', () => {
  let stack: BotStack;
  let other: Store;
  let monitor: Redis;
  const seen: string[][] = [];

  beforeAll(async () => {
    stack = await startBotStack({ workers: 0 });
    // Another replica's store on the same Redis: what it writes, this bot must see.
    other = createStore(stack.redis, stack.storePrefix);
    monitor = new Redis(stack.redisUrl, { maxRetriesPerRequest: 1 });
    const m = await monitor.monitor();
    m.on('monitor', (_time: string, args: string[]) => seen.push(args));
    await stack.bot.parts.bindings?.ready();
  }, 60_000);

  afterAll(async () => {
    monitor?.disconnect();
    await stack?.close();
  });

  const keyOf = (channel: string) => `${stack.storePrefix}:channel:${channel}:project`;
  const projectAnswer = async (channel: string) =>
    (await (await stack.command('project', { channelId: channel })).answer()).text ?? '';
  /** Every command Redis ran up to now (a marker through MONITOR: it shows commands in order). */
  const commandsSoFar = async () => {
    const marker = `marker-${seen.length}-${Date.now()}`;
    await stack.redis.echo(marker);
    const deadline = Date.now() + 10_000;
    while (!seen.some((a) => a[0]?.toLowerCase() === 'echo' && a[1] === marker)) {
      if (Date.now() > deadline) throw new Error('MONITOR did not show the marker');
      await new Promise((r) => setImmediate(r));
    }
    return [...seen];
  };
  const readsOf = (commands: string[][], key: string) =>
    commands.filter((a) => a[0]?.toLowerCase() === 'get' && a[1] === key).length;
  const bind = (channel: string, projectId: string) =>
    other.bindProject(channel, { projectId, name: projectId, boundBy: 'U0OTHER', boundAt: Date.now() });

  it('reads a channel binding from Redis once, then answers from the process', async () => {
    const channel = 'C0CACHE1';
    await bind(channel, 'alpha');
    const before = readsOf(await commandsSoFar(), keyOf(channel));
    for (let i = 0; i < 3; i++) expect(await projectAnswer(channel)).toContain('`alpha`');
    // Three /gpu project read the binding twice each (the listener's context, then the answer).
    expect(readsOf(await commandsSoFar(), keyOf(channel)) - before).toBe(1);
  });

  it('shows a binding another replica changed on the next request', async () => {
    const channel = 'C0CACHE2';
    expect(await projectAnswer(channel)).toContain('default project');
    await bind(channel, 'beta');
    expect(await projectAnswer(channel)).toContain('`beta`');
    await bind(channel, 'gamma');
    expect(await projectAnswer(channel)).toContain('`gamma`');
  });

  it('answers from Redis while the invalidation connection is down, and caches again once it is back', async () => {
    const channel = 'C0CACHE3';
    const bindings = stack.bot.parts.bindings!;
    await bind(channel, 'delta');
    expect(await projectAnswer(channel)).toContain('`delta`');
    const clients = String(await stack.redis.call('CLIENT', 'LIST', 'TYPE', 'pubsub'));
    const line = clients.split('\n').find((l) => / name=gpuops-invalidations-/.test(l));
    const id = line?.match(/^id=(\d+)/)?.[1];
    expect(id, 'the bot subscribes to invalidations on a connection of its own').toBeDefined();
    // Killed, then the binding changed before the bot can track again: no invalidation reaches it.
    await stack.redis.call('CLIENT', 'KILL', 'ID', id!);
    await bind(channel, 'epsilon');
    expect(await projectAnswer(channel)).toContain('`epsilon`');
    await bindings.ready();
    await bind(channel, 'zeta');
    expect(await projectAnswer(channel)).toContain('`zeta`');
    const before = readsOf(await commandsSoFar(), keyOf(channel));
    expect(await projectAnswer(channel)).toContain('`zeta`');
    expect(readsOf(await commandsSoFar(), keyOf(channel)) - before).toBe(0);
  });

  it('forgets a binding removed from Redis', async () => {
    const channel = 'C0CACHE4';
    await bind(channel, 'eta');
    expect(await projectAnswer(channel)).toContain('`eta`');
    await stack.redis.del(keyOf(channel));
    expect(await projectAnswer(channel)).toContain('default project');
  });

  // Last: it empties the stack's Redis.
  it('forgets every binding when the database is flushed', async () => {
    const channel = 'C0CACHE5';
    await bind(channel, 'theta');
    expect(await projectAnswer(channel)).toContain('`theta`');
    await stack.redis.flushdb();
    expect(await projectAnswer(channel)).toContain('default project');
  });
});
