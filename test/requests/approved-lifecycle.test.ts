import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPROVE_ACTION } from '../../src/commands/approvals/render.js';
import type { GpuCommand } from '../../src/commands/registry.js';
import { NotReplicatedError } from '../../src/jobs/replicated.js';
import { acceptRequest } from '../../src/requests/accept-request.js';
import { decideApproval } from '../../src/requests/decide-approval.js';
import {
  type ApprovedOutcome,
  driveApproved,
  type LifecycleDeps,
  sweepApproved,
} from '../../src/requests/drive-approved.js';
import { registerApprovalActions } from '../../src/slack/listeners/approval-actions.js';
import {
  DEFAULT_PROJECT,
  expectCleanSlack,
  type ListenerStack,
  policyOf,
  startListenerStack,
} from '../support/listener-stack.js';
import { type Asked, approvalKit } from './approval-kit.js';

// The approved half of a request's lifecycle (src/requests/drive-approved.ts), driven as the sweeper
// (the `requests.sweep` system job) and a click drive it: against real Redis, the real BullMQ queue
// and the fake Slack Web API through the production decision ports. What is checked is what people
// see: the requester's message, the approvers' card, the audit trail, and whether a job exists.

const APPROVALS = 'C0APPROVE';
const POLICY = policyOf(
  'lifecycle.yaml',
  'default_role: operator',
  'approvals:',
  '  approvers: { users: [U0BOB] }',
  `  channel: ${APPROVALS}`,
  '  expires_after: 1h',
);
const NO_REPLICA = 'Redis has no replica';

describe('the approved-request lifecycle and its sweeper', () => {
  let stack: ListenerStack;
  const { lifecycle, ask, approvedLeftBehind } = approvalKit(() => stack, 'lc');
  beforeAll(async () => {
    stack = await startListenerStack(registerApprovalActions, { policy: POLICY });
  });
  afterAll(async () => {
    expectCleanSlack(stack);
    await stack?.close();
  });

  const jobsOf = async (id: string) => (await stack.jobs()).filter((j) => j.id === id);
  const cardText = (a: Asked) => JSON.stringify(stack.slack.message(a.card.channel, a.card.ts)?.blocks);
  const mineText = (a: Asked) => stack.slack.message(a.mine.channel, a.mine.ts)?.text ?? '';
  const mineBlocks = (a: Asked) => JSON.stringify(stack.slack.message(a.mine.channel, a.mine.ts)?.blocks);
  const cardEdits = (a: Asked) =>
    stack.slack
      .callsTo('chat.update')
      .filter((c) => c.body.channel === a.card.channel && c.body.ts === a.card.ts).length;

  /** Sweeps once, with the counts the sweeper reports for its metric. */
  async function sweep(extra: Partial<LifecycleDeps> = {}) {
    let counts: Readonly<Record<ApprovedOutcome, number>> | undefined;
    const summary = await sweepApproved(lifecycle({ ...extra, countSwept: (c) => (counts = c) }));
    return { summary, counts };
  }

  /** Ages the stored decision by `ms`, as if that long had passed since the click. */
  async function ageDecision(id: string, ms: number): Promise<void> {
    const key = `${stack.store.prefix}:{approvals}:req:${id}`;
    const decision = JSON.parse(String(await stack.redis.hget(key, 'decision'))) as { at: number };
    await stack.redis.hset(key, 'decision', JSON.stringify({ ...decision, at: decision.at - ms }));
  }

  it('queues an approved request its decision left behind, once, and the card says Queued only then', async () => {
    const asked = await ask();
    await approvedLeftBehind(asked, Date.now() + 60_000);
    expect(await jobsOf(asked.id)).toHaveLength(0);
    expect(cardText(asked)).not.toContain('Queued');

    const first = await sweep();
    expect(first.summary).toBe('approved requests: 1 queued, 0 still waiting, 0 lapsed');
    expect(first.counts).toEqual({ queued: 1, waiting: 0, lapsed: 0, gone: 0 });
    const jobs = await jobsOf(asked.id);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]!.data).toMatchObject({
      command: { kind: 'rm' },
      ctx: { userId: 'U0ADA', channelId: 'C0GPU' },
      approvalId: asked.id,
      // The job edits the requester's message instead of posting another.
      message: { channel: asked.mine.channel, ts: asked.mine.ts },
    });
    expect(cardText(asked)).toContain(':arrow_forward: *Queued*');
    expect((await stack.guardrails.approvals.get(asked.id))?.stage).toBe('queued');

    // Swept again (the next minute), nothing more happens: still one job.
    const again = await sweep();
    expect(again.summary).toBe('approved requests: 0 queued, 0 still waiting, 0 lapsed');
    expect(again.counts).toEqual({ queued: 0, waiting: 0, lapsed: 0, gone: 0 });
    expect(await jobsOf(asked.id)).toHaveLength(1);
  });

  it('leaves a request alone while someone else holds it (a click deciding it just now)', async () => {
    const asked = await ask();
    await approvedLeftBehind(asked, Date.now() + 60_000);
    expect(await stack.guardrails.approvals.claimEnqueue(asked.id, 15_000)).toBe(true);
    const held = await sweep();
    expect(held.counts).toEqual({ queued: 0, waiting: 0, lapsed: 0, gone: 0 });
    expect(await jobsOf(asked.id)).toHaveLength(0);
    await stack.guardrails.approvals.releaseEnqueue(asked.id);
    expect((await sweep()).counts).toEqual({ queued: 1, waiting: 0, lapsed: 0, gone: 0 });
    expect(await jobsOf(asked.id)).toHaveLength(1);
  });

  it('never runs a request past its deadline: it lapses, and requester, card and audit trail say so', async () => {
    const asked = await ask();
    const runBy = Date.now() - 1_000;
    await approvedLeftBehind(asked, runBy);
    const swept = await sweep();
    expect(swept.summary).toBe('approved requests: 0 queued, 0 still waiting, 1 lapsed');
    expect(swept.counts).toEqual({ queued: 0, waiting: 0, lapsed: 1, gone: 0 });
    expect(await jobsOf(asked.id)).toHaveLength(0);
    expect(mineText(asked)).toMatch(/^Not run \(approved by <@U0BOB>, never stored\): /);
    expect(mineBlocks(asked)).toContain('could not store its job on two servers by');
    expect(cardText(asked)).toContain(':x: *Not run*');
    const outcome = (await stack.guardrails.audit.latest(30)).find(
      (e) => e.approvalId === asked.id && e.event === 'outcome',
    );
    expect(outcome).toMatchObject({
      actor: 'U0ADA',
      outcome: 'failed',
      operation: 'rm',
      channel: 'C0GPU',
      project: DEFAULT_PROJECT,
      parameters: { detail: 'Approved, but its job could not be stored on two servers before its deadline.' },
    });
    // A late Approve on its card runs nothing and says why.
    const late = await decideApproval(lifecycle(), {
      id: asked.id,
      clicker: 'U0BOB',
      state: 'approved',
      mayDecide: async () => undefined,
    });
    expect(late).toEqual({
      ok: false,
      message: expect.stringMatching(
        /^Already approved by <@U0BOB> .*; nothing was changed\. It never reached the queue and is too old to run now: the requester can ask again\.$/,
      ),
    });
    expect(await jobsOf(asked.id)).toHaveLength(0);
    // The sweeper has forgotten it: nothing more is tried.
    expect((await sweep()).counts).toEqual({ queued: 0, waiting: 0, lapsed: 0, gone: 0 });
  });

  it('drops a lapsed request’s sealed secrets, and fails the workflow step waiting for it', async () => {
    const secret = await stack.sealer.seal('#!/bin/sh\necho secret');
    const asked = await ask({}, { sealed: { userData: { sealedRef: secret.sealedRef } } });
    await approvedLeftBehind(asked, Date.now() - 1_000);
    expect((await sweep()).counts?.lapsed).toBe(1);
    expect(await stack.sealer.unseal(secret)).toBeUndefined();

    const instance = 'lc-step';
    await stack.machines(instance);
    const step = await acceptRequest(stack.deps, { kind: 'rm', instance } as GpuCommand, {
      teamId: 'T0FAKE',
      channelId: 'C0GPU',
      userId: 'U0ADA',
      projectId: DEFAULT_PROJECT,
      requestedAt: Date.now(),
      step: { executionId: 'Fx1lapse', callbackId: 'remove_machine', quiet: false },
    });
    if (step.status !== 'pending-approval') throw new Error(`expected pending-approval, got ${step.status}`);
    await stack.guardrails.approvals.decide(step.approvalId, {
      state: 'approved',
      by: 'U0BOB',
      at: Date.now() - 20_000,
      runBy: Date.now() - 1_000,
    });
    const since = stack.slack.mark();
    expect((await sweep()).counts?.lapsed).toBe(1);
    const failed = stack.slack.calls.slice(since).filter((c) => c.method === 'functions.completeError');
    expect(failed.map((c) => [c.body.function_execution_id, c.body.error])).toEqual([
      [
        'Fx1lapse',
        `/gpu rm ${instance} was approved, but gpuops could not store its job on two servers in time. Nothing was changed; run the workflow again.`,
      ],
    ]);
  });

  it('counts an approval the deadline reaches exactly as lapsed, not queued', async () => {
    const asked = await ask();
    const record = await stack.guardrails.approvals.get(asked.id);
    const now = Date.now();
    await approvedLeftBehind(asked, now);
    const stored = await stack.guardrails.approvals.get(asked.id);
    expect(record?.state).toBe('pending');
    expect(await driveApproved(lifecycle(), stored!, now)).toBe('lapsed');
    expect(await jobsOf(asked.id)).toHaveLength(0);
  });

  it('gives an approval made before deadlines existed half an hour from its decision', async () => {
    const asked = await ask();
    const decided = await stack.guardrails.approvals.decide(asked.id, {
      state: 'approved',
      by: 'U0BOB',
      at: Date.now() - 20_000,
    });
    expect(decided.outcome).toBe('decided');
    const request = (await stack.guardrails.approvals.get(asked.id))!;
    expect(request.runBy).toBeUndefined();
    const decidedAt = request.decision!.at;
    // With a deadline of 10 s configured it lapses 10 s after its decision; by default it has 30 minutes.
    expect(await driveApproved(lifecycle({ runWithinMs: 10_000 }), request, decidedAt + 10_000)).toBe(
      'lapsed',
    );
    expect(await jobsOf(asked.id)).toHaveLength(0);
    const other = await ask();
    await stack.guardrails.approvals.decide(other.id, { state: 'approved', by: 'U0BOB', at: decidedAt });
    const waiting = (await stack.guardrails.approvals.get(other.id))!;
    expect(await driveApproved(lifecycle(), waiting, decidedAt + 29 * 60_000)).toBe('queued');
    expect(await jobsOf(other.id)).toHaveLength(1);
  });

  it('holds an approval while Redis has no replica, says so once, and runs it once it can', async () => {
    const asked = await ask();
    const degraded = lifecycle({ degraded: async () => NO_REPLICA });
    const decided = await decideApproval(degraded, {
      id: asked.id,
      clicker: 'U0BOB',
      state: 'approved',
      mayDecide: async () => undefined,
    });
    expect(decided).toEqual({ ok: true });
    expect(await jobsOf(asked.id)).toHaveLength(0);
    expect(mineText(asked)).toMatch(/^Approved by <@U0BOB>: /);
    expect(mineBlocks(asked)).toContain(
      'It will run once gpuops can store the job on two servers: Redis has no replica right now.',
    );
    expect(cardText(asked)).toContain(':hourglass_flowing_sand: *Waiting to run*');
    expect(cardText(asked)).not.toContain('Queued');
    const request = await stack.guardrails.approvals.get(asked.id);
    expect(request).toMatchObject({ stage: 'queuing', held: true });

    // A sweep while Redis still has no replica: still waiting, and nobody is told again.
    const edits = cardEdits(asked);
    const still = await sweep({ degraded: async () => NO_REPLICA });
    expect(still.summary).toBe('approved requests: 0 queued, 1 still waiting, 0 lapsed');
    expect(still.counts).toEqual({ queued: 0, waiting: 1, lapsed: 0, gone: 0 });
    expect(cardEdits(asked)).toBe(edits);
    expect(await jobsOf(asked.id)).toHaveLength(0);

    // A later Approve on the card says why it has not run yet, and queues nothing.
    await ageDecision(asked.id, 60_000);
    const stale = await decideApproval(degraded, {
      id: asked.id,
      clicker: 'U0BOB',
      state: 'approved',
      mayDecide: async () => undefined,
    });
    expect(stale).toEqual({
      ok: false,
      message: expect.stringMatching(
        /; nothing was changed\. Its job is not stored yet: it runs once gpuops can store it on two servers\.$/,
      ),
    });
    expect(await jobsOf(asked.id)).toHaveLength(0);

    // The replica is back: the next sweep queues it, once.
    const back = await sweep();
    expect(back.counts).toEqual({ queued: 1, waiting: 0, lapsed: 0, gone: 0 });
    expect(await jobsOf(asked.id)).toHaveLength(1);
    expect(cardText(asked)).toContain(':arrow_forward: *Queued*');
  });

  it('holds an approval whose job no replica took, and says so; any other failure is retried without a word', async () => {
    const noReplica = await ask();
    await approvedLeftBehind(noReplica, Date.now() + 60_000);
    const unreplicated = await sweep({
      replicated: async () => {
        throw new NotReplicatedError(0, 1);
      },
    });
    expect(unreplicated.counts).toEqual({ queued: 0, waiting: 1, lapsed: 0, gone: 0 });
    expect(cardText(noReplica)).toContain(':hourglass_flowing_sand: *Waiting to run*');
    expect(mineBlocks(noReplica)).toContain('Redis has no replica right now.');
    expect((await stack.guardrails.approvals.get(noReplica.id))?.held).toBe(true);
    // Released at once: the next sweep, with a replica back, queues it.
    expect((await sweep()).counts).toEqual({ queued: 1, waiting: 0, lapsed: 0, gone: 0 });

    const blip = await ask();
    await approvedLeftBehind(blip, Date.now() + 60_000);
    const edits = cardEdits(blip);
    const failed = await sweep({
      replicated: async () => {
        throw new Error('the queue did not answer');
      },
    });
    expect(failed.counts).toEqual({ queued: 0, waiting: 1, lapsed: 0, gone: 0 });
    expect(cardEdits(blip)).toBe(edits);
    expect((await stack.guardrails.approvals.get(blip.id))?.held).toBeUndefined();
    expect((await sweep()).counts).toEqual({ queued: 1, waiting: 0, lapsed: 0, gone: 0 });
    expect(await jobsOf(blip.id)).toHaveLength(1);
  });

  it('keeps a request whose degraded check fails to answer going as if Redis were whole', async () => {
    const asked = await ask();
    await approvedLeftBehind(asked, Date.now() + 60_000);
    const swept = await sweep({
      degraded: async () => {
        throw new Error('no answer');
      },
    });
    expect(swept.counts).toEqual({ queued: 1, waiting: 0, lapsed: 0, gone: 0 });
    expect(await jobsOf(asked.id)).toHaveLength(1);
  });

  it('drops an approval whose record no longer reads from the sweep, counted as gone', async () => {
    const asked = await ask();
    await approvedLeftBehind(asked, Date.now() + 60_000);
    await stack.redis.hset(`${stack.store.prefix}:{approvals}:req:${asked.id}`, 'data', '{"v":1}');
    const swept = await sweep();
    expect(swept.counts).toEqual({ queued: 0, waiting: 0, lapsed: 0, gone: 1 });
    expect(swept.summary).toBe('approved requests: 0 queued, 0 still waiting, 0 lapsed');
    expect(await jobsOf(asked.id)).toHaveLength(0);
    expect((await stack.guardrails.approvals.listQueuing()).map((q) => q.id)).not.toContain(asked.id);
  });

  it('answers an approved job privately once its response_url has outlived Slack’s 30 minutes', async () => {
    const fresh = await ask({ responseUrl: 'https://hooks.slack.test/fresh' });
    const old = await ask({
      requestedAt: Date.now() - 26 * 60_000,
      responseUrl: 'https://hooks.slack.test/old',
    });
    for (const a of [fresh, old]) await approvedLeftBehind(a, Date.now() + 60_000);
    expect((await sweep()).counts?.queued).toBe(2);
    expect((await jobsOf(fresh.id))[0]!.data.ctx.responseUrl).toBe('https://hooks.slack.test/fresh');
    expect((await jobsOf(old.id))[0]!.data.ctx.responseUrl).toBeUndefined();
    expect((await jobsOf(old.id))[0]!.data.ctx.userId).toBe('U0ADA');
  });

  it('queues an approved request from a click on its card, with the job on the queue before "Queued"', async () => {
    const asked = await ask();
    await stack.press(APPROVE_ACTION, asked.id, { userId: 'U0BOB', channelId: APPROVALS, ts: asked.card.ts });
    expect(await jobsOf(asked.id)).toHaveLength(1);
    expect(cardText(asked)).toContain(':arrow_forward: *Queued*');
    // The queued mark lost, the job still on the queue: driven again, it makes no second job.
    const request = (await stack.guardrails.approvals.get(asked.id))!;
    expect(await driveApproved(lifecycle(), request)).toBe('queued');
    expect(await jobsOf(asked.id)).toHaveLength(1);
  });
});
