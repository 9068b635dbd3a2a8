import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseCommand } from '../../src/commands/parse-command.js';
import type { JobContext } from '../../src/jobs/job-data.js';
import { estimateMachines } from '../../src/pricing/cost.js';
import { SIM_CONFIGURATIONS } from '../../src/sim/catalog.js';
import {
  type ApprovalRequest,
  approvalIdFor,
  createApprovals,
  SYSTEM_ACTOR,
} from '../../src/store/approvals.js';
import type { AuditInput } from '../../src/store/audit.js';

const prefix = `test-approvals-${randomUUID().slice(0, 8)}`;
const T0 = Date.now();
let redis: Redis;

function command(text: string) {
  const parsed = parseCommand(text);
  if (!parsed.ok) throw new Error(`bad test command ${text}`);
  return parsed.command;
}

function ctx(userId: string, requestedAt = T0): JobContext {
  return {
    teamId: 'T0TEAM0001',
    channelId: 'C0GPUOPS01',
    userId,
    userName: 'ada',
    projectId: '3f1c2a9e-8b7d-4c1e-9f2a-1b2c3d4e5f60',
    requestedAt,
  };
}

const HOUR = 3600;

beforeAll(() => {
  redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
});

afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

describe('approval requests in Redis', () => {
  it('creates, reads back, lists and records where the card and the requester message are', async () => {
    const approvals = createApprovals(redis, { prefix });
    const cost = estimateMachines({
      prices: { configurations: SIM_CONFIGURATIONS },
      type: 'h100-hgx-80gb.8x',
    });
    const big = command('create big h100-hgx-80gb.8x --tag team=vision');
    const { created, request } = await approvals.create({
      command: big,
      ctx: ctx('U0ADA00001'),
      cost,
      reasons: ['It costs about $23.12/h, above the $10.00/h that needs no approval.'],
      approvalChannel: 'C0APPROVAL1',
      expiresAfterSeconds: 24 * HOUR,
      lease: { seconds: 8 * HOUR, remindBeforeSeconds: 1800 },
      now: T0,
    });
    expect(created).toBe(true);
    expect(request.id).toBe(approvalIdFor(ctx('U0ADA00001'), big));
    expect(request.id).not.toContain(':');
    expect(request).toMatchObject({
      kind: 'create',
      command: big,
      requester: 'U0ADA00001',
      state: 'pending',
      createdAt: T0,
      expiresAt: T0 + 24 * HOUR * 1000,
      cost: { known: true, perHourUsd: '23.12', perDayUsd: '554.88' },
    });

    // The same request delivered twice is one approval request.
    const again = await approvals.create({
      command: big,
      ctx: ctx('U0ADA00001'),
      reasons: [],
      approvalChannel: 'C0APPROVAL1',
      expiresAfterSeconds: HOUR,
      now: T0 + 5,
    });
    expect(again.created).toBe(false);
    expect(again.request.expiresAt).toBe(T0 + 24 * HOUR * 1000);

    const rm = await approvals.create({
      command: command('rm old-box'),
      ctx: ctx('U0BOB00001', T0 + 1000),
      reasons: ['`/gpu rm` always needs an approval.'],
      approvalChannel: 'C0GPUOPS01',
      expiresAfterSeconds: HOUR,
      now: T0 + 1000,
    });

    await approvals.setCard(request.id, { channel: 'C0APPROVAL1', ts: '1760000000.000100' });
    expect(
      await approvals.setRequesterMessage(request.id, { channel: 'C0GPUOPS01', ts: '1760000000.000200' }),
    ).toBe(true);
    const stored = await approvals.get(request.id);
    expect(stored).toEqual({
      ...request,
      card: { channel: 'C0APPROVAL1', ts: '1760000000.000100' },
      requesterMessage: { channel: 'C0GPUOPS01', ts: '1760000000.000200' },
    });
    expect(await approvals.get('apr-nothing-here')).toBeUndefined();
    // A message ref for a request that does not exist creates nothing.
    await approvals.setCard('apr-nothing-here', { channel: 'C1', ts: '1.2' });
    expect(await redis.exists(`${prefix}:{approvals}:req:apr-nothing-here`)).toBe(0);

    const pending = await approvals.listPending({ now: T0 + 2000 });
    expect(pending.map((r) => r.id)).toEqual([request.id, rm.request.id]);
    const forBob = await approvals.listPendingFor({
      now: T0 + 2000,
      mayDecide: (r) => r.requester !== 'U0BOB00001',
    });
    expect(forBob.map((r) => r.id)).toEqual([request.id]);
    // Past its expiry time a request is no longer offered, even before the sweep closes it.
    expect((await approvals.listPending({ now: T0 + HOUR * 1000 + 1000 })).map((r) => r.id)).toEqual([
      request.id,
    ]);
  });

  it('decides exactly once under 50 concurrent clicks from separate connections', async () => {
    const approvals = createApprovals(redis, { prefix });
    const { request } = await approvals.create({
      command: command('rm contested'),
      ctx: ctx('U0ASKER001', Date.now()),
      reasons: ['`/gpu rm` always needs an approval.'],
      approvalChannel: 'C0APPROVAL1',
      expiresAfterSeconds: HOUR,
    });
    const connections = Array.from(
      { length: 50 },
      () => new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 }),
    );
    try {
      await Promise.all(connections.map((c) => c.ping()));
      const results = await Promise.all(
        connections.map((c, i) =>
          createApprovals(c, { prefix }).decide(request.id, {
            state: i % 2 === 0 ? 'approved' : 'denied',
            by: `U0CLICK${String(i).padStart(3, '0')}`,
            ...(i % 2 === 1 ? { reason: `not now (${i})` } : {}),
          }),
        ),
      );
      const winners = results.filter((r) => r.outcome === 'decided');
      expect(winners).toHaveLength(1);
      const winner = winners[0]!;
      if (winner.outcome !== 'decided') throw new Error('unreachable');
      const losers = results.filter((r) => r.outcome !== 'decided');
      expect(losers).toHaveLength(49);
      for (const loser of losers) {
        expect(loser.outcome).toBe('already-decided');
        if (loser.outcome !== 'already-decided') continue;
        // Every other click sees the winner's decision, not its own.
        expect(loser.request.state).toBe(winner.request.state);
        expect(loser.request.decision).toEqual(winner.request.decision);
      }
      const final = (await approvals.get(request.id)) as ApprovalRequest;
      expect(final.state).toBe(winner.request.state);
      expect(final.decision?.by).toMatch(/^U0CLICK\d{3}$/);
      expect(await approvals.listPending()).not.toContainEqual(expect.objectContaining({ id: request.id }));
    } finally {
      for (const c of connections) c.disconnect();
    }
  });

  it('keeps a denial reason and refuses a second decision', async () => {
    const approvals = createApprovals(redis, { prefix });
    const { request } = await approvals.create({
      command: command('fs rm datasets'),
      ctx: ctx('U0ASKER001', Date.now()),
      reasons: [],
      approvalChannel: 'C0APPROVAL1',
      expiresAfterSeconds: HOUR,
    });
    const denied = await approvals.decide(request.id, {
      state: 'denied',
      by: 'U0LEAD0001',
      reason: 'still in use',
    });
    expect(denied).toMatchObject({
      outcome: 'decided',
      request: { state: 'denied', decision: { by: 'U0LEAD0001', reason: 'still in use' } },
    });
    const late = await approvals.decide(request.id, { state: 'approved', by: 'U0OTHER001' });
    expect(late).toMatchObject({ outcome: 'already-decided', request: { state: 'denied' } });
    expect(await approvals.decide('apr-missing', { state: 'approved', by: 'U0LEAD0001' })).toEqual({
      outcome: 'not-found',
    });
    // A requester's message posted after the decision is not recorded: the decision never saw it.
    expect(await approvals.setRequesterMessage(request.id, { channel: 'C0GPUOPS01', ts: '1.5' })).toBe(false);
    expect((await approvals.get(request.id))?.requesterMessage).toBeUndefined();
  });

  it('expires what nobody decided in time, once, and refuses clicks after the expiry time', async () => {
    const approvals = createApprovals(redis, { prefix: `${prefix}-expiry` });
    const start = Date.now();
    const { request } = await approvals.create({
      command: command('slurm sudo hpc ada on'),
      ctx: ctx('U0ASKER001', start),
      reasons: ['`/gpu slurm sudo` always needs an approval.'],
      approvalChannel: 'C0APPROVAL1',
      expiresAfterSeconds: 60,
      now: start,
    });
    const other = await approvals.create({
      command: command('rm later'),
      ctx: ctx('U0ASKER001', start + 1),
      reasons: [],
      approvalChannel: 'C0APPROVAL1',
      expiresAfterSeconds: 600,
      now: start,
    });
    expect(await approvals.expireDue(start + 30_000)).toEqual([]);
    expect(
      await approvals.decide(request.id, { state: 'expired', by: SYSTEM_ACTOR, at: start + 30_000 }),
    ).toMatchObject({
      outcome: 'not-due',
      request: { state: 'pending' },
    });

    const late = start + 61_000;
    const click = await approvals.decide(request.id, { state: 'approved', by: 'U0LEAD0001', at: late });
    expect(click).toMatchObject({ outcome: 'expired', request: { state: 'pending' } });

    const closed = await approvals.expireDue(late);
    expect(closed).toHaveLength(1);
    expect(closed[0]).toMatchObject({
      id: request.id,
      state: 'expired',
      decision: { by: SYSTEM_ACTOR, at: late },
    });
    // A second sweep (another replica) closes nothing more.
    expect(await approvals.expireDue(late)).toEqual([]);
    expect((await approvals.get(request.id))?.state).toBe('expired');
    expect((await approvals.get(other.request.id))?.state).toBe('pending');
    expect((await approvals.listPending({ now: late })).map((r) => r.id)).toEqual([other.request.id]);
    // The key expires on its own some time after the request did.
    const ttl = await redis.pttl(`${prefix}-expiry:{approvals}:req:${request.id}`);
    expect(ttl).toBeGreaterThan(29 * 86_400_000);

    const keys = await redis.keys(`${prefix}-expiry:*`);
    if (keys.length > 0) await redis.del(...keys);
  });
});

describe('approval requests: what the cards and the expiry job rely on', () => {
  const make = (approvals: ReturnType<typeof createApprovals>, text: string, user: string, now = T0) =>
    approvals.create({
      command: command(text),
      ctx: ctx(user, now),
      reasons: ['It needs an approval.'],
      approvalChannel: 'C0APPROVAL1',
      expiresAfterSeconds: HOUR,
      now,
    });

  it('answers a decision on a request it does not hold with not-found, and changes nothing', async () => {
    const approvals = createApprovals(redis, { prefix });
    expect(await approvals.decide('apr-nosuchrequest', { state: 'approved', by: 'U0LEAD0001' })).toEqual({
      outcome: 'not-found',
    });
    expect(await approvals.get('apr-nosuchrequest')).toBeUndefined();
  });

  it('lists pending requests oldest first, up to a limit, and only those not yet expired', async () => {
    const approvals = createApprovals(redis, { prefix: `${prefix}-list` });
    const first = (await make(approvals, 'rm list-1', 'U0LIST0001', T0)).request;
    const second = (await make(approvals, 'rm list-2', 'U0LIST0002', T0 + 1_000)).request;
    const now = T0 + 2_000;
    expect((await approvals.listPending({ now })).map((r) => r.id)).toEqual([first.id, second.id]);
    expect((await approvals.listPending({ now, limit: 1 })).map((r) => r.id)).toEqual([first.id]);
    // Past the first one's expiry: it is no longer offered to approvers.
    const later = first.expiresAt + 1;
    expect((await approvals.listPending({ now: later })).map((r) => r.id)).toEqual([second.id]);
    const mine = await approvals.listPendingFor({
      now,
      limit: 5,
      mayDecide: (r) => r.requester !== 'U0LIST0001',
    });
    expect(mine.map((r) => r.id)).toEqual([second.id]);
    const limited = await approvals.listPendingFor({ now, limit: 1, mayDecide: () => true });
    expect(limited.map((r) => r.id)).toEqual([first.id]);
    const afterFirst = await approvals.listPendingFor({ now: first.expiresAt + 1, mayDecide: () => true });
    expect(afterFirst.map((r) => r.id)).toEqual([second.id]);
    // A decided request is not pending any more.
    await approvals.decide(first.id, { state: 'approved', by: 'U0LEAD0001', at: now });
    expect((await approvals.listPending({ now })).map((r) => r.id)).toEqual([second.id]);
  });

  it('keeps the lease, when the job was queued, and the audit entry until it is written', async () => {
    const approvals = createApprovals(redis, { prefix });
    const { request } = await approvals.create({
      command: command('create leased-1 h100-hgx-80gb.8x'),
      ctx: ctx('U0LEASE001'),
      reasons: ['costly'],
      approvalChannel: 'C0APPROVAL1',
      expiresAfterSeconds: HOUR,
      lease: { seconds: 8 * HOUR, remindBeforeSeconds: 1800 },
      now: T0,
    });
    expect((await approvals.get(request.id))?.lease).toEqual({
      seconds: 8 * HOUR,
      remindBeforeSeconds: 1800,
    });
    expect((await approvals.get(request.id))?.reasons).toEqual(['costly']);
    expect((await approvals.get(request.id))?.enqueuedAt).toBeUndefined();
    await approvals.setEnqueued(request.id, T0 + 5_000);
    expect((await approvals.get(request.id))?.enqueuedAt).toBe(T0 + 5_000);
    const audit: AuditInput = {
      event: 'decision',
      actor: 'U0LEAD0001',
      operation: 'create',
      outcome: 'approved',
    };
    const decided = await approvals.decide(request.id, {
      state: 'approved',
      by: 'U0LEAD0001',
      at: T0 + 1_000,
      audit,
    });
    expect(decided.outcome).toBe('decided');
    expect((await approvals.get(request.id))?.pendingAudit).toMatchObject({ outcome: 'approved' });
    await approvals.auditWritten(request.id);
    expect((await approvals.get(request.id))?.pendingAudit).toBeUndefined();
    expect((await approvals.get(request.id))?.decision).toEqual({ by: 'U0LEAD0001', at: T0 + 1_000 });
  });

  it('drops from the expiry index a request whose record is gone, and closes only the due ones', async () => {
    const p = `${prefix}-gone`;
    const approvals = createApprovals(redis, { prefix: p });
    const gone = (await make(approvals, 'rm gone-1', 'U0GONE0001', T0)).request;
    const kept = (await make(approvals, 'rm kept-1', 'U0GONE0002', T0 + 10 * HOUR * 1000)).request;
    // Its record gone (kept past its time, or deleted by hand), its entry in the expiry index stays.
    expect(await redis.del(`${p}:{approvals}:req:${gone.id}`)).toBe(1);
    const closed = await approvals.expireDue(gone.expiresAt + 1);
    expect(closed).toEqual([]);
    // The index no longer offers the gone one; the later one is still pending.
    expect(await approvals.expireDue(gone.expiresAt + 2)).toEqual([]);
    expect((await approvals.get(kept.id))?.state).toBe('pending');
    expect(await redis.zrange(`${p}:{approvals}:pending`, '0', '-1')).toEqual([kept.id]);
  });

  it("keeps an approval's enqueue intent with its decision, and lets a lapsed request never run nor a run one lapse", async () => {
    const p = `${prefix}-stages`;
    const approvals = createApprovals(redis, { prefix: p });
    const a = (await make(approvals, 'rm stage-a', 'U0STAGE001', T0)).request;
    const b = (await make(approvals, 'rm stage-b', 'U0STAGE002', T0)).request;
    for (const r of [a, b]) {
      const decided = await approvals.decide(r.id, {
        state: 'approved',
        by: 'U0LEAD0001',
        at: T0 + 1_000,
        runBy: T0 + 60_000,
      });
      expect(decided.outcome === 'decided' && decided.request.stage).toBe('queuing');
    }
    expect(await approvals.listQueuing()).toEqual([
      { id: expect.any(String), runBy: T0 + 60_000 },
      { id: expect.any(String), runBy: T0 + 60_000 },
    ]);
    // The decision holds the claim until its attempt ends; then one claimant at a time.
    expect(await approvals.claimEnqueue(a.id, 15_000, T0 + 2_000)).toBe(false);
    await approvals.releaseEnqueue(a.id);
    expect(await approvals.claimEnqueue(a.id, 15_000, T0 + 2_000)).toBe(true);
    expect(await approvals.claimEnqueue(a.id, 15_000, T0 + 3_000)).toBe(false);
    // a lapses: a worker can no longer take it.
    expect(await approvals.advance(a.id, 'lapsed')).toBe('lapsed');
    expect(await approvals.advance(a.id, 'running')).toBe('lapsed');
    expect(await approvals.advance(a.id, 'queued')).toBe('lapsed');
    // b is taken by a worker: it can no longer lapse, nor be claimed for another enqueue.
    expect(await approvals.advance(b.id, 'running')).toBe('running');
    expect(await approvals.advance(b.id, 'lapsed')).toBe('running');
    expect(await approvals.claimEnqueue(b.id, 0, T0 + 100_000)).toBe(false);
    expect((await approvals.get(b.id))?.enqueuedAt).toBeGreaterThan(0);
    expect(await approvals.listQueuing()).toEqual([]);
    // A denied request has no stage to move.
    const c = (await make(approvals, 'rm stage-c', 'U0STAGE003', T0)).request;
    await approvals.decide(c.id, { state: 'denied', by: 'U0LEAD0001', at: T0 + 1_000, runBy: T0 + 60_000 });
    expect(await approvals.advance(c.id, 'running')).toBe('not-approved');
  });
});

describe("a request's response_url", () => {
  // A response_url lets whoever holds it post in the requester's name for 30 minutes: anyone who can
  // read Redis must not find one in a record that is kept for 30 days.
  const url = 'https://hooks.slack.test/commands/T0TEAM0001/1/secretpart';

  it('is kept beside the record only while Slack takes answers on it, and read back with it', async () => {
    const approvals = createApprovals(redis, { prefix });
    const now = Date.now();
    const { request } = await approvals.create({
      command: command('rm url-1'),
      ctx: { ...ctx('U0URL00001', now - 10 * 60_000), responseUrl: url },
      reasons: ['rm needs an approval'],
      approvalChannel: 'C0APPROVAL1',
      expiresAfterSeconds: 24 * HOUR,
      now,
    });
    expect(request.ctx.responseUrl).toBe(url);
    const stored = await redis.hgetall(`${prefix}:{approvals}:req:${request.id}`);
    expect(JSON.stringify(stored)).not.toContain('secretpart');
    const ttl = await redis.pttl(`${prefix}:{approvals}:url:${request.id}`);
    // Made 10 minutes into its 30: about 20 minutes left, never more.
    expect(ttl).toBeGreaterThan(19 * 60_000);
    expect(ttl).toBeLessThanOrEqual(20 * 60_000);
    expect((await approvals.get(request.id))?.ctx.responseUrl).toBe(url);
    const decided = await approvals.decide(request.id, { state: 'denied', by: 'U0BOB00001' });
    expect(decided.outcome === 'decided' && decided.request.ctx.responseUrl).toBe(url);
  });

  it('is not kept at all once its 30 minutes are over', async () => {
    const approvals = createApprovals(redis, { prefix });
    const now = Date.now();
    const { request } = await approvals.create({
      command: command('rm url-2'),
      ctx: { ...ctx('U0URL00002', now - 31 * 60_000), responseUrl: url },
      reasons: ['rm needs an approval'],
      approvalChannel: 'C0APPROVAL1',
      expiresAfterSeconds: 24 * HOUR,
      now,
    });
    expect(request.ctx.responseUrl).toBeUndefined();
    expect(await redis.exists(`${prefix}:{approvals}:url:${request.id}`)).toBe(0);
    expect((await approvals.get(request.id))?.ctx.responseUrl).toBeUndefined();
  });
});
