import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePolicy } from '../../src/policy/load-policy.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import {
  askForApproval,
  click,
  ephemeralTo,
  finished,
  messageWhen,
  type Pending,
  primeCatalog,
  REQUEST_CHANNEL,
  requestJobsInQueue,
  stored,
  until,
} from './guardrails-kit.js';

// Buttons outlive what they act on: a card stays in the channel for months, while the job it made is
// forgotten after days (docs/operations.md, "How long things are kept"). A click on a decided request
// must never run it again, whatever has expired since; an approved request whose job never reached
// the queue is queued by the next Approve, never by a Deny.

const DAY_MS = 86_400_000;

const POLICY = parsePolicy(`
roles:
  operator: { users: [U0ADA] }
approvals:
  threshold_per_hour: 10
  approvers: { users: [U0BOB] }
  expires_after: 40d
`);

describe('stale Approve and Deny buttons', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B', policy: POLICY });
    await primeCatalog(stack);
  });
  afterAll(async () => {
    await stack?.close();
  });

  /** Moves the decision `ms` into the past, as if that long had passed since the click. */
  async function ageDecision(id: string, ms: number): Promise<void> {
    const key = `${stack.storePrefix}:{approvals}:req:${id}`;
    const decision = JSON.parse(String(await stack.redis.hget(key, 'decision'))) as { at: number };
    await stack.redis.hset(key, 'decision', JSON.stringify({ ...decision, at: decision.at - ms }));
  }

  /** What a click leaves the clicker and the queue with, once its answer has come. */
  async function staleClick(pending: Pending, label: 'Approve' | 'Deny', answer: RegExp) {
    const before = stack.slack.ephemerals.length;
    const trigger = label === 'Deny' ? stack.slack.issueTriggerId() : undefined;
    expect((await click(stack, pending, 'U0BOB', label, trigger)).status).toBe(200);
    await until(
      () =>
        stack.slack.ephemerals.slice(before).find((e) => e.user === 'U0BOB' && answer.test(String(e.text))),
      `an answer matching ${answer}`,
    );
  }

  it('runs an approved create once, though its job and job record expired before a late Approve or Deny', async () => {
    const pending = await askForApproval(stack, 'create stale-1 h100-hgx-80gb.8x', {
      approvalChannel: REQUEST_CHANNEL,
    });
    await click(stack, pending, 'U0BOB');
    await messageWhen(stack, REQUEST_CHANNEL, pending.requesterTs!, /^Done:/);
    await finished(stack, pending.approvalId);

    // Day 20: the job record (14 days) and the BullMQ job id (7 days) are gone; the approval is kept.
    await stack.redis.del(`${stack.storePrefix}:job:${pending.approvalId}`);
    await (await stack.queue.getJob(pending.approvalId))?.remove();
    await ageDecision(pending.approvalId, 20 * DAY_MS);

    await staleClick(pending, 'Approve', /^Already approved by <@U0BOB>/);
    await staleClick(pending, 'Deny', /^Already approved by <@U0BOB>/);
    expect(await requestJobsInQueue(stack)).toEqual([]);
    expect(await stack.queue.getJob(pending.approvalId)).toBeUndefined();
    expect(stack.sim.control.createCount('createInstance', 'stale-1')).toBe(1);
    expect(stack.slack.message(REQUEST_CHANNEL, pending.requesterTs!)!.text).toMatch(/^Done:/);
  });

  it('queues an approved request whose job never reached the queue on a later Approve, never on a Deny', async () => {
    const pending = await askForApproval(stack, 'create lost-1 h100-hgx-80gb.8x', {
      approvalChannel: REQUEST_CHANNEL,
    });
    // The decision was stored, then the process died before the job was queued.
    const decided = await stack.guardrails.approvals.decide(pending.approvalId, {
      state: 'approved',
      by: 'U0BOB',
      at: Date.now() - 60_000,
    });
    expect(decided.outcome).toBe('decided');

    await staleClick(pending, 'Deny', /^Already approved by <@U0BOB>/);
    expect(await stack.queue.getJob(pending.approvalId)).toBeUndefined();

    await staleClick(pending, 'Approve', /^Already approved by <@U0BOB>/);
    await finished(stack, pending.approvalId);
    expect(stack.sim.control.createCount('createInstance', 'lost-1')).toBe(1);
    expect((await stored(stack, pending.approvalId)).enqueuedAt).toBeGreaterThan(0);
  });

  it('keeps the decision on the audit trail when the trail could not be written at the click', async () => {
    const pending = await askForApproval(stack, 'create audit-1 h100-hgx-80gb.8x', {
      approvalChannel: REQUEST_CHANNEL,
    });
    const trail = stack.guardrails.audit.key;
    // The audit stream cannot be written while the decision is made (WRONGTYPE on XADD).
    await stack.redis.rename(trail, `${trail}-saved`);
    await stack.redis.set(trail, 'not a stream');
    await click(stack, pending, 'U0BOB');
    await messageWhen(stack, REQUEST_CHANNEL, pending.requesterTs!, /^Done:/);
    await stack.redis.del(trail);
    await stack.redis.rename(`${trail}-saved`, trail);
    const decisions = async () =>
      (await stack.guardrails.audit.latest(100)).filter(
        (e) => e.event === 'decision' && e.approvalId === pending.approvalId,
      );
    expect(await decisions()).toEqual([]);

    // The next click on the card, however late, writes it; once.
    await ageDecision(pending.approvalId, 20_000);
    await staleClick(pending, 'Approve', /^Already approved by <@U0BOB>/);
    await staleClick(pending, 'Approve', /^Already approved by <@U0BOB>/);
    const written = await decisions();
    expect(written).toHaveLength(1);
    expect(written[0]).toMatchObject({ actor: 'U0ADA', approver: 'U0BOB', outcome: 'approved' });
    expect(stack.sim.control.createCount('createInstance', 'audit-1')).toBe(1);
  });

  it('says an approval that never reached the queue is too old to run, and runs nothing', async () => {
    const pending = await askForApproval(stack, 'create old-1 h100-hgx-80gb.8x', {
      approvalChannel: REQUEST_CHANNEL,
    });
    await stack.guardrails.approvals.decide(pending.approvalId, {
      state: 'approved',
      by: 'U0BOB',
      at: Date.now() - 8 * DAY_MS,
    });
    await staleClick(pending, 'Approve', /too old to run now: the requester can ask again/);
    await ephemeralTo(stack, 'U0BOB', /too old to run now/);
    expect(await stack.queue.getJob(pending.approvalId)).toBeUndefined();
    expect(stack.sim.control.createCount('createInstance', 'old-1')).toBe(0);
  });
});
