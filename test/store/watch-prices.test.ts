import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEFAULT_POLICY } from '../../src/policy/policy.js';
import { type Catalog, catalogCacheName, writeCatalog } from '../../src/store/catalog-cache.js';
import { cacheKey, createStore, type Store } from '../../src/store/store.js';
import { priceBookFor, runningCost } from '../../src/watch/spend.js';

// The watchers price spend and idle machines from the cached catalogue without parsing it whole at
// every look while it is unchanged: a refreshed price must still be the one the next look uses.

const PROJECT = 'p-prices';
const TYPE = 'h100-hgx-80gb.8x';

const catalog = (pricePerGpuHour: string, instances: number): Catalog => ({
  v: 1,
  refreshedAt: Date.now(),
  configurations: [
    {
      gpuType: 'H100_SXM5_80GB',
      gpuCounts: [1, 8],
      pricePerGpuHour,
      stoppedPricePerHour: '0.5',
      regions: ['eu-north1'],
      provisioningMinutes: 5,
    },
  ],
  instanceTypes: [],
  instances: Array.from({ length: instances }, (_, i) => ({ id: `i-${i}`, name: `w-${i}`, type: TYPE })),
  problems: [],
});

/** The hourly price of one running machine of TYPE, as a look would count it. */
const perHour = async (store: Store) => {
  const cost = runningCost(TYPE, await priceBookFor(store, PROJECT, DEFAULT_POLICY));
  return cost.known ? cost.perHour : cost.reason;
};

describe('the price book of a watcher look', () => {
  let redis: Redis;
  let store: Store;
  beforeAll(() => {
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
    store = createStore(redis, `tp${randomBytes(4).toString('hex')}`);
  });
  afterAll(async () => {
    const keys = await redis.keys(`${store.prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('follows each refresh of the catalogue, and says the price is unknown once it is gone', async () => {
    expect(await perHour(store)).toMatch(/price/i);
    await writeCatalog(store, PROJECT, catalog('2.00', 1000));
    expect(await perHour(store)).toBe(16);
    expect(await perHour(store)).toBe(16);
    // A refresh with a new price of the same length.
    await writeCatalog(store, PROJECT, catalog('3.00', 1000));
    expect(await perHour(store)).toBe(24);
    // Another replica's connection sees the same.
    const other = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
    try {
      expect(await perHour(createStore(other, store.prefix))).toBe(24);
    } finally {
      other.disconnect();
    }
    await redis.del(cacheKey(store.prefix, catalogCacheName(PROJECT)));
    expect(await perHour(store)).toMatch(/price/i);
  });

  it('reads an entry rewritten with the same time stamp and length as a new one', async () => {
    await writeCatalog(store, PROJECT, catalog('4.00', 10));
    expect(await perHour(store)).toBe(32);
    const key = cacheKey(store.prefix, catalogCacheName(PROJECT));
    const entry = JSON.parse((await redis.get(key))!) as { value: Catalog; storedAt: number };
    entry.value.configurations![0]!.pricePerGpuHour = '5.00';
    await redis.set(key, JSON.stringify(entry));
    expect(await perHour(store)).toBe(40);
  });
});
