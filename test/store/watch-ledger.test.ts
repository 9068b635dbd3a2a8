import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEFAULT_POLICY } from '../../src/policy/policy.js';
import { createStore, type Store } from '../../src/store/store.js';
import {
  createSnapshotStore,
  type ProjectSnapshot,
  snapshotKey,
  type WatchedResource,
} from '../../src/store/watch-snapshots.js';
import { createWatchSubscriptions } from '../../src/store/watch-subscriptions.js';
import { changedKeys, diffSnapshots } from '../../src/watch/diff-snapshot.js';
import { ledgerChange } from '../../src/watch/spend.js';

// The spend ledger as the digest and the Home tab read it, written as the watcher writes it: one look
// after another (diff, ledger change, one commit), each instance's GPU-hours counted from the looks
// that saw it running, though a look writes only the instances whose state changed.

const PROJECT = '3c1d0e2f-5a6b-4c7d-8e9f-0a1b2c3d4e5f';
const HOUR = 3_600_000;
// 8 GPUs and 1 GPU (the built-in pricing's types).
const BIG = 'h100-hgx-80gb.8x';
const SMALL = 'h100-hgx-80gb.1x';
const PRICES = { configurations: undefined, pricing: DEFAULT_POLICY.pricing };

const instance = (id: string, type: string, state: string): WatchedResource => ({
  key: `instance:${id}`,
  kind: 'instance',
  id,
  name: id,
  fields: { state, ip: '', type },
});

let redis: Redis;
let store: Store;
beforeAll(async () => {
  redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
  store = createStore(redis, `ledger-${randomBytes(4).toString('hex')}`);
  await createWatchSubscriptions(store).watch({ channelId: 'C1', projectId: PROJECT, by: 'U1', since: 1 });
});
afterAll(async () => {
  const keys = await redis.keys(`${store.prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

/** One watcher look at `at` that finds these instances, as pollProject commits it; its changes. */
async function look(at: number, found: WatchedResource[], project = PROJECT) {
  const snaps = createSnapshotStore(store);
  const stored = await snaps.read(project);
  const next: ProjectSnapshot = {
    v: 1,
    polledAt: at,
    resources: Object.fromEntries(found.map((r) => [r.key, structuredClone(r)])),
  };
  const changes = stored.snapshot ? diffSnapshots(stored.snapshot.resources, next.resources) : [];
  const ledger = ledgerChange(stored.snapshot, changes, next, PRICES, 'UTC');
  expect(
    (await snaps.commit(project, stored.version, next, ['C1'], [], { ledger, changed: changedKeys(changes) }))
      .committed,
  ).toBe(true);
  return changes;
}

describe('the spend ledger, kept as intervals', () => {
  it("counts each machine's GPU-hours from the looks that saw it running, across a day's end", async () => {
    const snaps = createSnapshotStore(store);
    const t0 = Date.parse('2026-11-24T22:00:00Z');
    // Baseline: big running, small stopped. Nothing is counted for the time before it.
    await look(t0, [instance('big', BIG, 'running'), instance('small', SMALL, 'stopped')]);
    // An hour later small was started: big ran for that hour (8 GPU-hours).
    await look(t0 + HOUR, [instance('big', BIG, 'running'), instance('small', SMALL, 'running')]);
    let day = await snaps.ledgerDay(PROJECT, '2026-11-24');
    expect(day.instances).toEqual({ big: 8 });
    expect(day.gpuHours).toBe(8);
    // Half an hour on, big stopped: both ran that half hour.
    await look(t0 + 1.5 * HOUR, [instance('big', BIG, 'stopped'), instance('small', SMALL, 'running')]);
    day = await snaps.ledgerDay(PROJECT, '2026-11-24');
    expect(day.instances).toEqual({ big: 12, small: 0.5 });
    expect(day.gpuHours).toBe(12.5);
    // Past midnight (00:30): the look's hour goes to the new day; the old day keeps what it had.
    await look(t0 + 2.5 * HOUR, [instance('big', BIG, 'stopped'), instance('small', SMALL, 'running')]);
    expect((await snaps.ledgerDay(PROJECT, '2026-11-24')).instances).toEqual({ big: 12, small: 0.5 });
    day = await snaps.ledgerDay(PROJECT, '2026-11-25');
    expect(day.instances).toEqual({ small: 1 });
    // small is deleted while running: it still counts the time up to the look that saw it gone.
    await look(t0 + 3 * HOUR, [instance('big', BIG, 'stopped')]);
    day = await snaps.ledgerDay(PROJECT, '2026-11-25');
    expect(day.instances).toEqual({ small: 1.5 });
    expect(day.gpuHours).toBe(1.5);
    // Dollars: the built-in pricing knows no price without the platform's list, so none are counted.
    expect(day.usd).toBe(0);
  });

  it('another replica reads the whole snapshot after a look that wrote only a changed and a gone machine', async () => {
    const project = '4d2e1f30-6b7c-4d8e-9f00-1b2c3d4e5f60';
    await createWatchSubscriptions(store).watch({ channelId: 'C2', projectId: project, by: 'U1', since: 1 });
    const fleet = Array.from({ length: 50 }, (_, i) => instance(`i${i}`, SMALL, 'running'));
    await look(1, fleet, project);
    // Another replica reads it whole from Redis, as stored.
    const other = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
    try {
      const theirs = createSnapshotStore(createStore(other, store.prefix));
      const changed = fleet.map((r, i) => (i === 7 ? instance(r.id, SMALL, 'stopping') : r)).slice(1);
      const changes = await look(2, changed, project);
      expect(changes.map((c) => `${c.type} ${c.resource.id}`).sort()).toEqual(['changed i7', 'gone i0']);
      const read = await theirs.read(project);
      expect(read.version).toBe(2);
      expect(Object.keys(read.snapshot!.resources)).toHaveLength(49);
      expect(read.snapshot!.resources['instance:i7']!.fields.state).toBe('stopping');
      expect(read.snapshot!.polledAt).toBe(2);
    } finally {
      other.disconnect();
    }
  });

  it('reads a snapshot written by the previous version (one JSON field) and rewrites it whole', async () => {
    const project = '5e3f2a41-7c8d-4e9f-8a1b-2c3d4e5f6a71';
    await createWatchSubscriptions(store).watch({ channelId: 'C3', projectId: project, by: 'U1', since: 1 });
    const old: ProjectSnapshot = {
      v: 1,
      polledAt: 5,
      resources: { 'instance:a': instance('a', SMALL, 'running') },
    };
    await redis.hset(
      snapshotKey(store.prefix, project),
      'version',
      '3',
      'data',
      JSON.stringify(old),
      'stamp',
      'x',
    );
    const snaps = createSnapshotStore(store);
    const stored = await snaps.read(project);
    expect(stored).toEqual({ version: 3, snapshot: old });
    const next: ProjectSnapshot = {
      v: 1,
      polledAt: 6,
      resources: {
        'instance:a': instance('a', SMALL, 'stopped'),
        'instance:b': instance('b', SMALL, 'running'),
      },
    };
    expect(diffSnapshots(stored.snapshot!.resources, next.resources)).toHaveLength(2);
    expect((await snaps.commit(project, 3, next, ['C3'], [])).committed).toBe(true);
    const fresh = createSnapshotStore(createStore(redis, store.prefix));
    // A reader with nothing cached gets the new layout's copy: both resources, the old field gone.
    const other = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
    try {
      const read = await createSnapshotStore(createStore(other, store.prefix)).read(project);
      expect(read).toEqual({ version: 4, snapshot: next });
      expect(await redis.hget(snapshotKey(store.prefix, project), 'data')).toBeNull();
    } finally {
      other.disconnect();
    }
    expect((await fresh.read(project)).version).toBe(4);
  });

  it('records a fleet of 100,000 appearing at once (one look), which used to overflow the call stack', async () => {
    const project = '6f4a3b52-8d9e-4fa0-9b1c-3d4e5f6a7b82';
    await createWatchSubscriptions(store).watch({ channelId: 'C4', projectId: project, by: 'U1', since: 1 });
    const snaps = createSnapshotStore(store);
    const resources = Object.fromEntries(
      Array.from({ length: 100_000 }, (_, i) => instance(`n${i}`, SMALL, 'running')).map((r) => [r.key, r]),
    );
    const next: ProjectSnapshot = { v: 1, polledAt: Date.parse('2026-11-25T10:00:00Z'), resources };
    const ledger = ledgerChange(undefined, [], next, PRICES, 'UTC');
    expect((await snaps.commit(project, 0, next, ['C4'], [], { ledger })).committed).toBe(true);
    expect(await redis.hlen(`${store.prefix}:{watch}:snapres:${project}`)).toBe(100_000);
  });
});
