import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Catalog, readCatalog, writeCatalog } from '../../src/store/catalog-cache.js';
import {
  catalogAndTypeOf,
  rememberDeleted,
  rememberInstanceType,
} from '../../src/store/instance-types-seen.js';
import { createStore, type Store } from '../../src/store/store.js';

// Every priced request reads the project's catalogue before it is acknowledged (its price and the
// names it gives), and the catalogue lists the project's machines. It is parsed once per refresh and
// shared by the requests until the next one: what a request is priced and checked by must still be
// the latest refresh, another replica's included, and no reader may change what the next one reads.

const PROJECT = 'p-catalog-read';
const TYPE = 'h100-hgx-80gb.8x';
const OTHER_TYPE = 'h100-hgx-80gb.1x';

const catalog = (type: string, instances: number): Catalog => ({
  v: 1,
  refreshedAt: Date.now(),
  configurations: [],
  instanceTypes: [{ name: type, inUse: instances, lastSeenAt: Date.now() }],
  instances: Array.from({ length: instances }, (_, i) => ({ id: `i-${i}`, name: `w-${i}`, type })),
  problems: [],
});

describe('the catalogue a request is priced and checked by', () => {
  let redis: Redis;
  let other: Redis;
  let store: Store;
  let replica: Store;
  beforeAll(() => {
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
    other = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
    const prefix = `tc${randomBytes(4).toString('hex')}`;
    store = createStore(redis, prefix);
    replica = createStore(other, prefix);
  });
  afterAll(async () => {
    const keys = await redis.keys(`${store.prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    other.disconnect();
  });

  it('is the latest refresh, whichever replica wrote it, and nothing once it is gone', async () => {
    expect(await readCatalog(store, PROJECT)).toBeUndefined();
    await writeCatalog(store, PROJECT, catalog(TYPE, 2_000));
    expect((await catalogAndTypeOf(store, PROJECT, 'w-1999')).type).toBe(TYPE);
    expect((await catalogAndTypeOf(store, PROJECT, 'w-1999')).type).toBe(TYPE);
    // Another replica refreshes it: same size, other type.
    await writeCatalog(replica, PROJECT, catalog(OTHER_TYPE, 2_000));
    expect((await catalogAndTypeOf(store, PROJECT, 'w-1999')).type).toBe(OTHER_TYPE);
    expect((await readCatalog(store, PROJECT))?.catalog.instanceTypes[0]?.name).toBe(OTHER_TYPE);
    // A refresh with fewer machines: the one gone is no longer priced from the listing.
    await writeCatalog(replica, PROJECT, catalog(OTHER_TYPE, 10));
    expect((await catalogAndTypeOf(store, PROJECT, 'w-1999')).type).toBeUndefined();
    await redis.del(`${store.prefix}:cache:catalog:${PROJECT}`);
    expect(await readCatalog(store, PROJECT)).toBeUndefined();
    expect((await catalogAndTypeOf(store, PROJECT, 'w-1')).cached).toBeUndefined();
  });

  it('still heeds what gpuops did to a machine since the listing, read with it', async () => {
    await writeCatalog(store, PROJECT, catalog(TYPE, 5));
    await rememberInstanceType(store, PROJECT, 'fresh-1', OTHER_TYPE);
    expect(await catalogAndTypeOf(store, PROJECT, 'fresh-1')).toMatchObject({ type: OTHER_TYPE, made: true });
    await rememberDeleted(store, PROJECT, ['w-3'], Date.now() + 1_000);
    expect(await catalogAndTypeOf(store, PROJECT, 'w-3')).toMatchObject({ gone: true });
    expect((await catalogAndTypeOf(store, PROJECT, 'w-3')).type).toBeUndefined();
  });

  it('cannot be changed by one reader for the next', async () => {
    await writeCatalog(store, PROJECT, catalog(TYPE, 3));
    const first = await readCatalog(store, PROJECT);
    expect(() => {
      (first!.catalog.instances as { type: string }[])[0]!.type = 'tampered';
    }).toThrow(TypeError);
    expect(() => (first!.catalog.instances as unknown[]).push({})).toThrow(TypeError);
    const next = await catalogAndTypeOf(store, PROJECT, 'w-0');
    expect(next.type).toBe(TYPE);
    expect(next.cached?.catalog.instances).toHaveLength(3);
  });

  it('an entry that is not a catalogue is read as none, and a good one after it is read', async () => {
    await redis.set(`${store.prefix}:cache:catalog:${PROJECT}`, '{"value":{"v":2},"storedAt":1}');
    expect(await readCatalog(store, PROJECT)).toBeUndefined();
    await redis.set(`${store.prefix}:cache:catalog:${PROJECT}`, 'not json');
    expect(await readCatalog(store, PROJECT)).toBeUndefined();
    await writeCatalog(store, PROJECT, catalog(TYPE, 1));
    expect((await readCatalog(store, PROJECT))?.catalog.instances).toHaveLength(1);
  });
});
