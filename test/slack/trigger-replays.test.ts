import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { firstDelivery, SIGNATURE_WINDOW_SECONDS } from '../../src/slack/trigger-replays.js';
import { createStore, type Store } from '../../src/store/store.js';

// A command Slack delivers twice with the same trigger (a captured request sent again inside the
// signature window) runs once: the second delivery is told it is a replay.

describe('firstDelivery', () => {
  let redis: Redis;
  let store: Store;
  beforeAll(() => {
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
    store = createStore(redis, `replays-${process.pid}-${Date.now()}`);
  });
  afterAll(async () => {
    const keys = await redis.keys(`${store.prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('takes a trigger once, and refuses it again for the whole signature window', async () => {
    expect(await firstDelivery(store, 'T1.111'), 'the first delivery runs').toBe(true);
    expect(await firstDelivery(store, 'T1.111'), 'the replay is refused').toBe(false);
    expect(await firstDelivery(store, 'T1.222'), 'another trigger runs').toBe(true);
    const ttl = await redis.ttl(`${store.prefix}:trigger:T1.111`);
    expect(ttl).toBeGreaterThan(SIGNATURE_WINDOW_SECONDS - 10);
    expect(ttl).toBeLessThanOrEqual(SIGNATURE_WINDOW_SECONDS);
  });

  it('lets a delivery without a trigger through (events carry none)', async () => {
    expect(await firstDelivery(store, undefined)).toBe(true);
    expect(await firstDelivery(store, undefined)).toBe(true);
  });

  it('fails rather than running a replay when Redis cannot be asked', async () => {
    const gone = new Redis(inject('redisUrl'), { lazyConnect: true, enableOfflineQueue: false });
    await expect(firstDelivery(createStore(gone, store.prefix), 'T1.333')).rejects.toThrow();
    gone.disconnect();
  });
});
