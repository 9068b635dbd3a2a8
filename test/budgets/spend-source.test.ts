import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createSpendSource, daysBetween } from '../../src/budgets/spend-source.js';
import { DEFAULT_POLICY } from '../../src/policy/policy.js';
import { writeCatalog } from '../../src/store/catalog-cache.js';
import { recordInstanceOwner } from '../../src/store/instance-owners.js';
import { countSpendOf } from '../../src/store/spend-projects.js';
import { createStore, type Store } from '../../src/store/store.js';
import {
  createSnapshotStore,
  type ProjectSnapshot,
  type WatchedResource,
} from '../../src/store/watch-snapshots.js';
import { createWatchSubscriptions } from '../../src/store/watch-subscriptions.js';
import { changedKeys, diffSnapshots } from '../../src/watch/diff-snapshot.js';
import { ledgerChange } from '../../src/watch/spend.js';

// The ledger per machine and day as budgets read it (createSpendSource): hours, dollars, type, name and
// owner of each machine, written look by look as the watcher writes them, in a project nobody watches.

const PROJECT = '6f4a3b52-8d9e-4fa0-9b1c-3d4e5f6a7b82';
const HOUR = 3_600_000;
const BIG = 'h100-hgx-80gb.8x';
const SMALL = 'h100-hgx-80gb.1x';
// $2.89 per H100-hour: $23.12/h for 8, $2.89/h for 1.
const PRICES = {
  configurations: [{ gpu_type: 'H100_SXM5_80GB', price_per_gpu_hr: '2.89', stopped_price_per_hour: '0' }],
  pricing: DEFAULT_POLICY.pricing,
};

const instance = (id: string, type: string, state: string): WatchedResource => ({
  key: `instance:${id}`,
  kind: 'instance',
  id,
  name: `${id}-name`,
  fields: { state, ip: '', type },
});

let redis: Redis;
let store: Store;
beforeAll(async () => {
  redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
  store = createStore(redis, `spend-${randomBytes(4).toString('hex')}`);
});
afterAll(async () => {
  const keys = await redis.keys(`${store.prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

async function look(at: number, found: WatchedResource[]) {
  const snaps = createSnapshotStore(store);
  const stored = await snaps.read(PROJECT);
  const next: ProjectSnapshot = {
    v: 1,
    polledAt: at,
    resources: Object.fromEntries(found.map((r) => [r.key, structuredClone(r)])),
  };
  const changes = stored.snapshot ? diffSnapshots(stored.snapshot.resources, next.resources) : [];
  const ledger = ledgerChange(stored.snapshot, changes, next, PRICES, 'UTC');
  const result = await snaps.commit(PROJECT, stored.version, next, [], [], {
    ledger,
    changed: changedKeys(changes),
  });
  expect(result.committed).toBe(true);
}

describe('the spend source', () => {
  it('lists the calendar days of a range, across a month end', () => {
    expect(daysBetween('2026-02-27', '2026-03-02')).toEqual([
      '2026-02-27',
      '2026-02-28',
      '2026-03-01',
      '2026-03-02',
    ]);
    expect(daysBetween('2026-03-02', '2026-03-01')).toEqual([]);
  });

  it('gives one row per machine and day with hours, dollars, type and owner, and what runs now', async () => {
    await countSpendOf(store, PROJECT);
    // Counted, not watched: no channel follows it.
    expect(await createWatchSubscriptions(store).channelsOf(PROJECT)).toEqual([]);
    await recordInstanceOwner(store, 'big', 'U0OWNER');
    const t0 = Date.parse('2026-11-24T22:00:00Z');
    await look(t0, [instance('big', BIG, 'running'), instance('small', SMALL, 'stopped')]);
    await look(t0 + HOUR, [instance('big', BIG, 'running'), instance('small', SMALL, 'running')]);
    await look(t0 + 1.5 * HOUR, [instance('big', BIG, 'stopped'), instance('small', SMALL, 'running')]);
    // Past midnight: the day's first look closes the 24th and counts its hour on the 25th.
    await look(t0 + 2.5 * HOUR, [instance('big', BIG, 'stopped'), instance('small', SMALL, 'running')]);
    await look(t0 + 3 * HOUR, [instance('big', BIG, 'stopped'), instance('small', SMALL, 'running')]);

    // The running price comes from the cached price list, as the catalogue refresh keeps it.
    await writeCatalog(store, PROJECT, {
      v: 1,
      refreshedAt: t0,
      configurations: [
        {
          gpuType: 'H100_SXM5_80GB',
          gpuCounts: [1, 8],
          pricePerGpuHour: '2.89',
          stoppedPricePerHour: '0',
          regions: [],
          provisioningMinutes: 5,
        },
      ],
      instanceTypes: [],
      problems: [],
    });
    const source = createSpendSource({ store, policy: DEFAULT_POLICY });
    const rows = await source.rows({ from: '2026-11-24', to: '2026-11-25' });
    const rounded = rows
      .map((r) => ({ ...r, hours: Math.round(r.hours * 1e6) / 1e6, usd: Math.round(r.usd * 1e4) / 1e4 }))
      .sort((a, b) => `${a.day}${a.instance}`.localeCompare(`${b.day}${b.instance}`));
    expect(rounded).toEqual([
      {
        day: '2026-11-24',
        project: PROJECT,
        instance: 'big',
        name: 'big-name',
        owner: 'U0OWNER',
        type: BIG,
        hours: 1.5,
        usd: 34.68,
      },
      {
        day: '2026-11-24',
        project: PROJECT,
        instance: 'small',
        name: 'small-name',
        type: SMALL,
        hours: 0.5,
        usd: 1.445,
      },
      {
        day: '2026-11-25',
        project: PROJECT,
        instance: 'small',
        name: 'small-name',
        type: SMALL,
        hours: 1.5,
        usd: 4.335,
      },
    ]);
    // The rows add up to the day's total the digest shows.
    const snaps = createSnapshotStore(store);
    for (const day of ['2026-11-24', '2026-11-25']) {
      const sum = rows.filter((r) => r.day === day).reduce((a, r) => a + r.usd, 0);
      expect(sum).toBeCloseTo((await snaps.ledgerDay(PROJECT, day)).usd, 6);
    }
    expect(await source.rows({ from: '2026-11-24', to: '2026-11-25', projects: ['other'] })).toEqual([]);
    expect(await source.running()).toEqual([
      { project: PROJECT, instance: 'small', name: 'small-name', type: SMALL, usdPerHour: 2.89 },
    ]);
  });
});
