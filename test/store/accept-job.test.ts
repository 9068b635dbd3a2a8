import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLogger } from '../../src/log/logger.js';
import { SIGNATURE_WINDOW_SECONDS } from '../../src/slack/trigger-replays.js';
import { createAudit } from '../../src/store/audit.js';
import { createStore, type JobRecord, type Store } from '../../src/store/store.js';

// A new request is claimed and recorded in one atomic step (Store.acceptJob): Slack delivering the same
// command twice (same trigger) runs it once for the whole signature window, a person repeating it
// within the dedupe window finds the first job, and a claim that fails writes nothing.

const record = (id: string, channelId = 'C0ACC'): JobRecord => ({
  id,
  kind: 'stop',
  summary: '/gpu stop train-01',
  userId: 'U0ACC',
  channelId,
  state: 'queued',
  createdAt: 1,
  updatedAt: 1,
});

const silent = createLogger({ level: 'silent' });

describe('Store.acceptJob', () => {
  let redis: Redis;
  let store: Store;
  beforeAll(() => {
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
    store = createStore(redis, `accept-${process.pid}-${Date.now()}`);
  });
  afterAll(async () => {
    const keys = await redis.keys(`${store.prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('records the first delivery, and names its job to a replay for the whole signature window', async () => {
    const trigger = { id: 'T1.111', seconds: SIGNATURE_WINDOW_SECONDS };
    const first = await store.acceptJob({
      record: record('job-1'),
      trigger,
      claim: { fingerprint: 'fp-1', seconds: 30 },
    });
    expect(first).toEqual({ status: 'recorded' });
    expect((await store.job('job-1'))?.state).toBe('queued');
    expect((await store.recentJobs('C0ACC', 10)).map((j) => j.id)).toEqual(['job-1']);
    const ttl = await redis.ttl(`${store.prefix}:trigger:T1.111`);
    expect(ttl).toBeGreaterThan(SIGNATURE_WINDOW_SECONDS - 10);
    expect(ttl).toBeLessThanOrEqual(SIGNATURE_WINDOW_SECONDS);

    // The replay carries a new fingerprint's time but the same trigger: refused before any other write.
    const replay = await store.acceptJob({
      record: record('job-2'),
      trigger,
      claim: { fingerprint: 'fp-2', seconds: 30 },
    });
    expect(replay).toEqual({ status: 'replay', holder: 'job-1' });
    expect(await store.job('job-2')).toBeUndefined();
    expect(await redis.exists(`${store.prefix}:dedupe:fp-2`), 'no dedupe claim left by a replay').toBe(0);
    expect((await store.recentJobs('C0ACC', 10)).map((j) => j.id)).toEqual(['job-1']);
  });

  it('finds the first job for a repeat within the dedupe window, and records nothing for it', async () => {
    const claim = { fingerprint: 'fp-3', seconds: 30 };
    expect(
      await store.acceptJob({
        record: record('job-3', 'C0REP'),
        trigger: { id: 'T1.333', seconds: 300 },
        claim,
      }),
    ).toEqual({
      status: 'recorded',
    });
    const repeat = await store.acceptJob({
      record: record('job-4', 'C0REP'),
      trigger: { id: 'T1.444', seconds: 300 },
      claim,
    });
    expect(repeat).toEqual({ status: 'duplicate', holder: 'job-3' });
    expect(await store.job('job-4')).toBeUndefined();
    expect((await store.recentJobs('C0REP', 10)).map((j) => j.id)).toEqual(['job-3']);
    // The repeat's trigger was new: it is held, so Slack redelivering the repeat is a replay of it.
    expect(await redis.get(`${store.prefix}:trigger:T1.444`)).toBe('job-4');
  });

  it('holds a repeat only while the first job is pending: a finished one frees the fingerprint', async () => {
    const claim = { fingerprint: 'fp-fin', seconds: 30 };
    expect(await store.acceptJob({ record: record('job-f1', 'C0FIN'), claim })).toEqual({
      status: 'recorded',
    });
    await store.updateJob('job-f1', { state: 'working' });
    expect(await store.acceptJob({ record: record('job-f2', 'C0FIN'), claim })).toEqual({
      status: 'duplicate',
      holder: 'job-f1',
    });
    await store.updateJob('job-f1', { state: 'done', detail: 'train-01 is stopped.' });
    expect(await store.acceptJob({ record: record('job-f3', 'C0FIN'), claim })).toEqual({
      status: 'recorded',
    });
    // The claim moved to the new job, which is pending in its turn.
    expect(await store.acceptJob({ record: record('job-f4', 'C0FIN'), claim })).toEqual({
      status: 'duplicate',
      holder: 'job-f3',
    });
    await store.updateJob('job-f3', { state: 'failed', detail: 'No such instance.' });
    expect(await store.acceptJob({ record: record('job-f5', 'C0FIN'), claim })).toEqual({
      status: 'recorded',
    });
  });

  it('ends the repeat window when another request named the same target since', async () => {
    const target = { id: 'proj:instance:train-01', seconds: 30 };
    const stop = { fingerprint: 'fp-stop', seconds: 30 };
    const start = { fingerprint: 'fp-start', seconds: 30 };
    expect(await store.acceptJob({ record: record('job-t1', 'C0TGT'), claim: stop, target })).toEqual({
      status: 'recorded',
    });
    // The same stop again, nothing asked in between: the first, still queued.
    expect(await store.acceptJob({ record: record('job-t2', 'C0TGT'), claim: stop, target })).toEqual({
      status: 'duplicate',
      holder: 'job-t1',
    });
    expect(await store.acceptJob({ record: record('job-t3', 'C0TGT'), claim: start, target })).toEqual({
      status: 'recorded',
    });
    // A start came in between: the stop runs again although the first one is still pending.
    expect(await store.acceptJob({ record: record('job-t4', 'C0TGT'), claim: stop, target })).toEqual({
      status: 'recorded',
    });
    expect(await redis.get(`${store.prefix}:target:${target.id}`)).toBe('job-t4');
  });

  it('counts a holder with no job record yet (a request waiting for an approver) as pending', async () => {
    expect(await store.claimRequest('fp-appr', 'appr-9', 30)).toBeUndefined();
    expect(
      await store.acceptJob({
        record: record('job-p1', 'C0APR'),
        claim: { fingerprint: 'fp-appr', seconds: 30 },
      }),
    ).toEqual({ status: 'duplicate', holder: 'appr-9' });
  });

  it('frees the claim of a request an approver denied or that expired, not of one still waiting', async () => {
    const approval = (id: string) => `${store.prefix}:{approvals}:req:${id}`;
    expect(await store.claimRequest('fp-den', 'appr-d1', 30)).toBeUndefined();
    await redis.hset(approval('appr-d1'), 'state', 'pending');
    // Asked again while the approvers have not decided: the same request.
    expect(await store.claimRequest('fp-den', 'appr-d2', 30)).toBe('appr-d1');
    await redis.hset(approval('appr-d1'), 'state', 'denied');
    // Denied: asking again is a new request, for approvers to see.
    expect(await store.claimRequest('fp-den', 'appr-d3', 30)).toBeUndefined();
    await redis.hset(approval('appr-d3'), 'state', 'expired');
    expect(
      await store.acceptJob({
        record: record('job-d4', 'C0DEN'),
        claim: { fingerprint: 'fp-den', seconds: 30 },
      }),
    ).toEqual({ status: 'recorded' });
  });

  it('records without claims (an approved request: its approval already made it happen once)', async () => {
    expect(await store.acceptJob({ record: record('job-5', 'C0APP') })).toEqual({ status: 'recorded' });
    expect(await store.acceptJob({ record: record('job-5', 'C0APP') })).toEqual({ status: 'recorded' });
    expect((await store.job('job-5'))?.summary).toBe('/gpu stop train-01');
    expect(await redis.keys(`${store.prefix}:trigger:`)).toEqual([]);
  });

  it('keeps a channel to its last 200 jobs', async () => {
    for (let i = 0; i < 205; i++) await store.acceptJob({ record: record(`many-${i}`, 'C0MANY') });
    const ids = await redis.lrange(`${store.prefix}:channel:C0MANY:jobs`, 0, -1);
    expect(ids).toHaveLength(200);
    expect(ids[0]).toBe('many-204');
  });

  it('claims a trigger for a request that goes to approvers, once', async () => {
    expect(await store.claimTrigger('T1.555', 'appr-1', 300)).toBeUndefined();
    expect(await store.claimTrigger('T1.555', 'appr-2', 300)).toBe('appr-1');
  });

  it("stores the request's audit entry with its record, and none for a repeat", async () => {
    const audit = createAudit(redis, { prefix: store.prefix, retentionSeconds: 86_400, log: silent });
    const entry = (jobId: string) =>
      audit.prepare({ event: 'request', actor: 'U0ACC', operation: 'stop', outcome: 'queued', jobId });
    const claim = { fingerprint: 'fp-audit', seconds: 30 };
    const first = await store.acceptJob({ record: record('job-a1', 'C0AUD'), claim, audit: entry('job-a1') });
    expect(first).toEqual({ status: 'recorded', auditId: expect.stringMatching(/^\d+-\d+$/) });
    const repeat = await store.acceptJob({
      record: record('job-a2', 'C0AUD'),
      claim,
      audit: entry('job-a2'),
    });
    expect(repeat).toEqual({ status: 'duplicate', holder: 'job-a1' });
    const trail = await audit.latest(10);
    expect(trail.map((e) => [e.jobId, e.outcome])).toEqual([['job-a1', 'queued']]);
    expect(trail[0]!.id).toBe(first.status === 'recorded' ? first.auditId : '');
  });

  it("lets Redis number an entry whose clock is behind the stream's last (another replica's ahead)", async () => {
    const audit = createAudit(redis, { prefix: store.prefix, retentionSeconds: 86_400, log: silent });
    const ahead = await audit.append({ event: 'request', actor: 'U0ACC', operation: 'ls', at: Date.now() });
    const behind = {
      ...audit.prepare({ event: 'request', actor: 'U0ACC', operation: 'stop', jobId: 'job-b1' }),
      idMs: 1,
    };
    const answer = await store.acceptJob({ record: record('job-b1', 'C0AUD2'), audit: behind });
    if (answer.status !== 'recorded') throw new Error('not recorded');
    const order = (id: string) => id.split('-').map(BigInt) as [bigint, bigint];
    const [mine, theirs] = [order(answer.auditId!), order(ahead.id)];
    expect(mine[0] > theirs[0] || (mine[0] === theirs[0] && mine[1] > theirs[1]), 'after the last').toBe(
      true,
    );
    expect((await audit.latest(1))[0]?.jobId).toBe('job-b1');
  });

  it("puts a job in its machine's order as it is accepted, in the order accepted, and a repeat not", async () => {
    const machine = 'machine-a';
    const stop = { fingerprint: 'fp-order-stop', seconds: 30 };
    expect(await store.acceptJob({ record: record('order-1'), claim: stop, machine })).toEqual({
      status: 'recorded',
    });
    // The person repeats the stop: it finds the first job and takes no place of its own.
    expect(await store.acceptJob({ record: record('order-2'), claim: stop, machine })).toEqual({
      status: 'duplicate',
      holder: 'order-1',
    });
    await store.acceptJob({
      record: record('order-3'),
      claim: { fingerprint: 'fp-order-start', seconds: 30 },
      machine,
    });
    const started = await store.earlierOnMachine(machine, 'order-3');
    expect(started.earlier.map((j) => j.id)).toEqual(['order-1']);
    expect(Math.abs(started.now - Date.now()), "Redis's clock, in ms").toBeLessThan(60_000);
    expect(started.earlier[0]!.acceptedAt).toBeLessThanOrEqual(started.now);
    expect((await store.earlierOnMachine(machine, 'order-1')).earlier).toEqual([]);
    // A job that reached the queue another way (a lease's stop) takes its place when it first begins: last.
    expect((await store.earlierOnMachine(machine, 'lease-stop')).earlier.map((j) => j.id)).toEqual([
      'order-1',
      'order-3',
    ]);
    await store.leaveMachineOrder(machine, 'order-1');
    expect((await store.earlierOnMachine(machine, 'order-3')).earlier).toEqual([]);
    expect(await store.earlierOnMachine('machine-b', 'order-3')).toMatchObject({ earlier: [] });
    const ttl = await redis.ttl(`${store.prefix}:order:${machine}`);
    expect(ttl, 'the order expires').toBeGreaterThan(0);
  });

  it('fails rather than running a replay when Redis cannot be asked', async () => {
    const gone = new Redis(inject('redisUrl'), { lazyConnect: true, enableOfflineQueue: false });
    const offline = createStore(gone, store.prefix);
    await expect(
      offline.acceptJob({ record: record('job-6'), trigger: { id: 'T1.666', seconds: 300 } }),
    ).rejects.toThrow();
    await expect(offline.claimTrigger('T1.777', 'x', 300)).rejects.toThrow();
    gone.disconnect();
  });
});
