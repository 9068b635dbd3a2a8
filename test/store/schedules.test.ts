import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  getSchedule,
  listSchedules,
  recordScheduleRun,
  removeSchedule,
  type Schedule,
  saveSchedule,
  stopSchedulesOn,
} from '../../src/store/schedules.js';
import { createStore, type Store } from '../../src/store/store.js';

// The schedules as the list, the App Home and a firing read them from a real Redis: by channel and by
// person, removal by id (only within the channel asked for), and a last run that never brings a
// removed schedule back.

const prefix = `test-schedules-${randomUUID().slice(0, 8)}`;
let redis: Redis;
let store: Store;

const schedule = (id: string, over: Partial<Schedule> = {}): Schedule => ({
  id,
  action: 'stop',
  target: { instance: 'i-1', name: 'train-01' },
  when: 'weekdays 20:00',
  pattern: '0 20 * * 1-5',
  tz: 'Europe/London',
  channelId: 'C0ML',
  projectId: 'p-1',
  ownerId: 'U0ADA',
  createdAt: 1_000,
  ...over,
});

beforeAll(() => {
  redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
  store = createStore(redis, prefix);
});
afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

describe('schedules in Redis', () => {
  it("lists a channel's and a person's schedules, oldest first", async () => {
    await saveSchedule(store, schedule('s-00000a', { createdAt: 3_000 }));
    await saveSchedule(store, schedule('s-00000b', { createdAt: 2_000, channelId: 'C0OPS' }));
    await saveSchedule(store, schedule('s-00000c', { createdAt: 1_000, ownerId: 'U0BOB' }));
    expect((await listSchedules(store, { channelId: 'C0ML' })).map((s) => s.id)).toEqual([
      's-00000c',
      's-00000a',
    ]);
    expect((await listSchedules(store, { userId: 'U0ADA' })).map((s) => s.id)).toEqual([
      's-00000b',
      's-00000a',
    ]);
    expect(await listSchedules(store, { userId: 'U0NOBODY' })).toEqual([]);
  });

  it('finds the stop schedules on a target by instance name or id, or by tag', async () => {
    await saveSchedule(store, schedule('s-00000d', { target: { tag: { key: 'team', value: 'ml' } } }));
    await saveSchedule(store, schedule('s-00000e', { action: 'start' }));
    const ids = async (target: Parameters<typeof stopSchedulesOn>[2]) =>
      (await stopSchedulesOn(store, 'C0ML', target)).map((s) => s.id).sort();
    expect(await ids({ instance: 'train-01' })).toEqual(['s-00000a', 's-00000c']);
    expect(await ids({ instance: 'i-1' })).toEqual(['s-00000a', 's-00000c']);
    expect(await ids({ tag: { key: 'team', value: 'ml' } })).toEqual(['s-00000d']);
    expect(await ids({ tag: { key: 'team', value: 'web' } })).toEqual([]);
  });

  it('removes by id only within the channel asked for, and a late run does not bring it back', async () => {
    expect(await removeSchedule(store, 's-00000b', { channelId: 'C0ML' })).toBeUndefined();
    expect(await getSchedule(store, 's-00000b')).toBeDefined();
    expect((await removeSchedule(store, 's-00000b', { channelId: 'C0OPS' }))?.id).toBe('s-00000b');
    expect(await removeSchedule(store, 's-00000b')).toBeUndefined();
    expect((await listSchedules(store, { userId: 'U0ADA' })).map((s) => s.id)).not.toContain('s-00000b');

    await recordScheduleRun(store, 's-00000a', { at: 5_000, outcome: 'stopping train-01' });
    expect((await getSchedule(store, 's-00000a'))?.lastRun).toEqual({
      at: 5_000,
      outcome: 'stopping train-01',
    });
    await removeSchedule(store, 's-00000a');
    await recordScheduleRun(store, 's-00000a', { at: 6_000, outcome: 'stopping train-01' });
    expect(await getSchedule(store, 's-00000a')).toBeUndefined();
  });
});

describe('making a schedule', () => {
  it('never overwrites another schedule at the same id; the request that made it may write it again', async () => {
    expect(await saveSchedule(store, schedule('s-00000f00000f', { madeBy: 'job-1' }))).toBe(true);
    expect(
      await saveSchedule(store, schedule('s-00000f00000f', { channelId: 'C0OTHER', madeBy: 'job-2' })),
    ).toBe(false);
    expect(await saveSchedule(store, schedule('s-00000f00000f', { channelId: 'C0OTHER' }))).toBe(false);
    expect((await getSchedule(store, 's-00000f00000f'))?.channelId).toBe('C0ML');
    expect((await listSchedules(store, { channelId: 'C0OTHER' })).map((s) => s.id)).toEqual([]);
    // A retried creation (same request) writes its own record again.
    expect(await saveSchedule(store, schedule('s-00000f00000f', { madeBy: 'job-1', tz: 'UTC' }))).toBe(true);
    expect((await getSchedule(store, 's-00000f00000f'))?.tz).toBe('UTC');
  });
});
