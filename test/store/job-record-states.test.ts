import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createStore, type JobRecord, type Store } from '../../src/store/store.js';

// A job's record through its states (src/store/job-record.ts `changed`, written by Store.updateJob):
// what `/gpu jobs` lists and what a retried attempt reads before it acts. A final answer is kept until
// it is marked shown, so that an attempt finding it unshown shows the very same answer again, and is
// dropped once it is.

const record = (id: string): JobRecord => ({
  id,
  kind: 'stop',
  summary: '/gpu stop train-01',
  userId: 'U0REC',
  channelId: 'C0REC',
  state: 'queued',
  createdAt: 1,
  updatedAt: 1,
});

const ANSWER = { text: 'Stopped train-01.', blocks: [{ type: 'section' }] };

describe('a job record through its states', () => {
  let redis: Redis;
  let store: Store;
  beforeAll(() => {
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
    store = createStore(redis, `jobrec-${process.pid}-${Date.now()}`);
  });
  afterAll(async () => {
    const keys = await redis.keys(`${store.prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('keeps the final answer until it is shown, then drops it and remembers that it was', async () => {
    await store.recordJob(record('rec-1'));
    const before = Date.now();
    await store.updateJob('rec-1', { state: 'working', detail: 'Asking the cloud to stop train-01…' });
    const working = await store.job('rec-1');
    expect(working).toMatchObject({ state: 'working', detail: 'Asking the cloud to stop train-01…' });
    expect(working!.updatedAt).toBeGreaterThanOrEqual(before);
    expect(working).not.toHaveProperty('answered');
    expect(working).not.toHaveProperty('answer');

    // The final state and its answer, recorded before the answer is shown.
    await store.updateJob('rec-1', { state: 'done', answer: ANSWER, outputs: { instance_id: 'i-1' } });
    const recorded = await store.job('rec-1');
    expect(recorded).toMatchObject({ state: 'done', answer: ANSWER, outputs: { instance_id: 'i-1' } });
    // A change that brings no new detail keeps the one before.
    expect(recorded!.detail).toBe('Asking the cloud to stop train-01…');
    expect(recorded).not.toHaveProperty('answered');

    // A retried attempt that records the state again without the answer still finds it.
    await store.updateJob('rec-1', { state: 'done' });
    expect((await store.job('rec-1'))?.answer).toEqual(ANSWER);

    // Shown: the answer is dropped, the record says it was shown.
    await store.updateJob('rec-1', { state: 'done', answered: true, stepDone: true });
    const shown = await store.job('rec-1');
    expect(shown).toMatchObject({ state: 'done', answered: true, stepDone: true });
    expect(shown).not.toHaveProperty('answer');
    // The outcome as data stays, for the workflow step that reads it.
    expect(shown?.outputs).toEqual({ instance_id: 'i-1' });
  });

  it('forgets an earlier "shown" mark when a new state is recorded', async () => {
    await store.recordJob(record('rec-2'));
    await store.updateJob('rec-2', { state: 'done', answered: true });
    expect((await store.job('rec-2'))?.answered).toBe(true);
    await store.updateJob('rec-2', { state: 'failed', detail: 'Not started: the queue was unreachable.' });
    const failed = await store.job('rec-2');
    expect(failed).toMatchObject({ state: 'failed', detail: 'Not started: the queue was unreachable.' });
    expect(failed).not.toHaveProperty('answered');
  });
});
