import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createStore, type Store } from '../../src/store/store.js';
import { createOutbox } from '../../src/store/watch-outbox.js';
import { createSnapshotStore, type ProjectSnapshot } from '../../src/store/watch-snapshots.js';
import { createWatchSubscriptions } from '../../src/store/watch-subscriptions.js';

// The compare-and-set that lets any number of watcher replicas look at a project while each change is
// posted once: a commit from a stale read writes nothing and queues nothing.

const PROJECT = '0b6f0c52-4d7a-4f44-9a57-5d7f2f0f7e01';

const snapshot = (state: string, polledAt: number): ProjectSnapshot => ({
  v: 1,
  polledAt,
  resources: {
    'instance:a': { key: 'instance:a', kind: 'instance', id: 'a', name: 'train-1', fields: { state } },
  },
});

describe('watch snapshots and subscriptions', () => {
  let redis: Redis;
  let store: Store;
  beforeAll(() => {
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
    store = createStore(redis, `ts${randomBytes(4).toString('hex')}`);
  });
  afterAll(async () => {
    const keys = await redis.keys(`${store.prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('lets exactly one of two looks from the same version commit, and queues its messages once', async () => {
    const subs = createWatchSubscriptions(store);
    await subs.watch({ channelId: 'C1', projectId: PROJECT, by: 'U1', since: 1 });
    await subs.watch({ channelId: 'C2', projectId: PROJECT, by: 'U1', since: 1 });
    const snaps = createSnapshotStore(store);
    expect(await snaps.read(PROJECT)).toEqual({ version: 0, snapshot: undefined });
    expect((await snaps.commit(PROJECT, 0, snapshot('running', 1), ['C1', 'C2'], [])).committed).toBe(true);

    const entry = { op: 'message' as const, mode: 'post' as const, text: 'train-1 stopped' };
    const [first, second] = await Promise.all([
      snaps.commit(PROJECT, 1, snapshot('stopped', 2), ['C1', 'C2'], [entry]),
      snaps.commit(PROJECT, 1, snapshot('stopped', 3), ['C1', 'C2'], [entry]),
    ]);
    expect([first.committed, second.committed].sort()).toEqual([false, true]);
    const winner = first.committed ? first : second;
    // Each channel's outbox got the message once, and a drain token to send it.
    expect(winner.kicked.map((k) => k.target).sort()).toEqual(['C1', 'C2']);
    const outbox = createOutbox(store);
    expect(await outbox.pending('C1')).toBe(1);
    expect(await outbox.pending('C2')).toBe(1);
    expect((await snaps.read(PROJECT)).version).toBe(2);
  });

  it('reads what another replica committed, and what was recorded after a project was dropped', async () => {
    const project = '7d1c6a70-2f1e-4a51-8d2e-3a6c1f9e0b22';
    await createWatchSubscriptions(store).watch({ channelId: 'C1', projectId: project, by: 'U1', since: 1 });
    const other = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
    try {
      const mine = createSnapshotStore(store);
      const theirs = createSnapshotStore(createStore(other, store.prefix));
      expect((await mine.commit(project, 0, snapshot('running', 1), ['C1'], [])).committed).toBe(true);
      expect((await mine.read(project)).snapshot?.resources['instance:a']?.fields.state).toBe('running');
      expect((await theirs.commit(project, 1, snapshot('stopped', 2), ['C1'], [])).committed).toBe(true);
      expect(await mine.read(project)).toMatchObject({ version: 2, snapshot: { polledAt: 2 } });
      // Dropped and recorded again from version 0 by the other replica: never the old snapshot.
      await theirs.drop(project);
      expect((await theirs.commit(project, 0, snapshot('deleting', 3), ['C1'], [])).committed).toBe(true);
      expect((await theirs.commit(project, 1, snapshot('gone', 4), ['C1'], [])).committed).toBe(true);
      expect(await mine.read(project)).toMatchObject({ version: 2, snapshot: { polledAt: 4 } });
    } finally {
      other.disconnect();
    }
  });

  it('commits nothing for a project nobody watches any more, and starts afresh after', async () => {
    const subs = createWatchSubscriptions(store);
    const snaps = createSnapshotStore(store);
    await subs.unwatch('C1');
    expect(await subs.channelsOf(PROJECT)).toEqual(['C2']);
    await subs.unwatch('C2');
    expect(await subs.projects()).toEqual([]);
    expect((await snaps.read(PROJECT)).version).toBe(0);
    const late = await snaps.commit(PROJECT, 0, snapshot('running', 4), ['C2'], []);
    expect(late.committed).toBe(false);
  });

  it('moves a channel to the project it works in now', async () => {
    const subs = createWatchSubscriptions(store);
    const other = '9a7b6c5d-4e3f-4a1b-8c2d-0e1f2a3b4c5d';
    await subs.watch({ channelId: 'C3', projectId: PROJECT, by: 'U1', since: 1 });
    const previous = await subs.watch({ channelId: 'C3', projectId: other, by: 'U2', since: 2 });
    expect(previous?.projectId).toBe(PROJECT);
    expect(await subs.projects()).toEqual([other]);
    expect((await subs.all()).map((w) => [w.channelId, w.projectId])).toEqual([['C3', other]]);
  });
});
