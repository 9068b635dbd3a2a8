import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuCommand } from '../../src/commands/registry.js';
import type { ApprovalOutcome } from '../../src/policy/guardrails.js';
import { acceptRequest } from '../../src/requests/accept-request.js';
import { type DecisionInput, decideApproval } from '../../src/requests/decide-approval.js';
import type { LifecycleDeps } from '../../src/requests/drive-approved.js';
import { slackDecisionPorts } from '../../src/slack/decision-ports.js';
import { registerApprovalActions } from '../../src/slack/listeners/approval-actions.js';
import {
  DEFAULT_PROJECT,
  expectCleanSlack,
  type ListenerStack,
  policyOf,
  startListenerStack,
} from '../support/listener-stack.js';

// An approver's decision (src/requests/decide-approval.ts) as every surface makes it, called with the
// deps the approval listener gives it: real Redis, the real BullMQ queue, the fake Slack Web API behind
// the production decision ports. What is checked is what people see: the answer to the click, the
// requester's message, the card, the audit trail, and whether anything was queued.

const APPROVALS = 'C0APPROVE';
const POLICY = policyOf(
  'decision.yaml',
  'default_role: operator',
  'approvals:',
  '  approvers: { users: [U0BOB] }',
  `  channel: ${APPROVALS}`,
  '  expires_after: 1h',
);
const mayAlways = async () => undefined;

describe('an approver’s decision', () => {
  let stack: ListenerStack;
  let n = 0;
  const outcomes: ApprovalOutcome[] = [];
  beforeAll(async () => {
    stack = await startListenerStack(registerApprovalActions, { policy: POLICY });
  });
  afterAll(async () => {
    expectCleanSlack(stack);
    await stack?.close();
  });

  const deps = (extra: Partial<LifecycleDeps> = {}): LifecycleDeps => ({
    ...stack.deps,
    guardrails: { ...stack.guardrails, onApproval: (o) => outcomes.push(o) },
    chat: slackDecisionPorts(stack.deps),
    ...extra,
  });

  interface Asked {
    readonly id: string;
    readonly card: { channel: string; ts: string };
    readonly mine: { channel: string; ts: string };
  }

  async function ask(extra: Parameters<typeof acceptRequest>[3] = {}): Promise<Asked> {
    const instance = `dc-${++n}`;
    await stack.machines(...Array.from({ length: n }, (_, i) => `dc-${i + 1}`));
    const result = await acceptRequest(
      stack.deps,
      { kind: 'rm', instance } as GpuCommand,
      {
        teamId: 'T0FAKE',
        channelId: 'C0GPU',
        userId: 'U0ADA',
        projectId: DEFAULT_PROJECT,
        requestedAt: Date.now(),
      },
      extra,
    );
    if (result.status !== 'pending-approval' || !result.card || !result.message) {
      throw new Error(`expected a request waiting for approval, got ${result.status}`);
    }
    return { id: result.approvalId, card: result.card, mine: result.message };
  }

  const decide = (input: Partial<DecisionInput> & { id: string }, extra?: Partial<LifecycleDeps>) =>
    decideApproval(deps(extra), { clicker: 'U0BOB', state: 'approved', mayDecide: mayAlways, ...input });

  const jobsOf = async (id: string) => (await stack.jobs()).filter((j) => j.id === id);
  const cardText = (a: Asked) => stack.slack.message(a.card.channel, a.card.ts)?.text ?? '';
  const mineText = (a: Asked) => stack.slack.message(a.mine.channel, a.mine.ts)?.text ?? '';
  const cardEdits = (a: Asked) =>
    stack.slack
      .callsTo('chat.update')
      .filter((c) => c.body.channel === a.card.channel && c.body.ts === a.card.ts).length;
  const auditOf = async (id: string) =>
    (await stack.guardrails.audit.latest(200)).filter((e) => e.approvalId === id).reverse();

  async function ageDecision(id: string, ms: number): Promise<void> {
    const key = `${stack.store.prefix}:{approvals}:req:${id}`;
    const decision = JSON.parse(String(await stack.redis.hget(key, 'decision'))) as { at: number };
    await stack.redis.hset(key, 'decision', JSON.stringify({ ...decision, at: decision.at - ms }));
  }

  it('approves once: one job, both messages say who approved, one decision on the audit trail', async () => {
    const asked = await ask();
    outcomes.length = 0;
    const before = Date.now();
    expect(await decide({ id: asked.id })).toEqual({ ok: true });
    expect(await jobsOf(asked.id)).toHaveLength(1);
    expect(cardText(asked)).toMatch(/^Approved by <@U0BOB>: /);
    expect(mineText(asked)).toMatch(/^Approved by <@U0BOB>: /);
    expect(outcomes).toEqual(['approved']);
    const stored = await stack.guardrails.approvals.get(asked.id);
    expect(stored?.decision).toEqual({ by: 'U0BOB', at: expect.any(Number) });
    expect(stored!.decision!.at).toBeGreaterThanOrEqual(before);
    // Its deadline to reach the queue: half an hour from the decision.
    expect(stored!.runBy).toBe(stored!.decision!.at + 30 * 60_000);
    expect(stored?.pendingAudit).toBeUndefined();
    const decisions = (await auditOf(asked.id)).filter((e) => e.event === 'decision');
    expect(decisions).toHaveLength(1);
    expect(decisions[0]).toMatchObject({
      actor: 'U0ADA',
      approver: 'U0BOB',
      operation: 'rm',
      project: DEFAULT_PROJECT,
      outcome: 'approved',
      channel: APPROVALS,
    });
    expect(decisions[0]!.durationMs).toBeGreaterThanOrEqual(0);
    expect(decisions[0]!.durationMs).toBeLessThan(60_000);
  });

  it('gives an approval the deadline the deployment configured', async () => {
    const asked = await ask();
    expect(await decide({ id: asked.id }, { runWithinMs: 5_000 })).toEqual({ ok: true });
    const stored = (await stack.guardrails.approvals.get(asked.id))!;
    expect(stored.runBy).toBe(stored.decision!.at + 5_000);
  });

  it('denies with the reason: nothing queued, secrets dropped, both messages say why', async () => {
    const secret = await stack.sealer.seal('#!/bin/sh\necho secret');
    const asked = await ask({ sealed: { userData: { sealedRef: secret.sealedRef } } });
    outcomes.length = 0;
    const denied = await decide({ id: asked.id, state: 'denied', reason: 'Not during the freeze' });
    expect(denied).toEqual({ ok: true });
    expect(await jobsOf(asked.id)).toHaveLength(0);
    expect(cardText(asked)).toBe(`Denied by <@U0BOB>: /gpu rm dc-${n}: Not during the freeze`);
    expect(mineText(asked)).toBe(`Denied by <@U0BOB>: /gpu rm dc-${n} — Not during the freeze`);
    expect(outcomes).toEqual(['denied']);
    expect(await stack.sealer.unseal(secret)).toBeUndefined();
    const stored = await stack.guardrails.approvals.get(asked.id);
    expect(stored).toMatchObject({
      state: 'denied',
      decision: { by: 'U0BOB', reason: 'Not during the freeze' },
    });
    const decisions = (await auditOf(asked.id)).filter((e) => e.event === 'decision');
    expect(decisions.map((e) => e.outcome)).toEqual(['denied']);
  });

  it('fails the workflow step waiting for a denied request, with the approver’s reason', async () => {
    const instance = `dc-${++n}`;
    await stack.machines(...Array.from({ length: n }, (_, i) => `dc-${i + 1}`));
    const result = await acceptRequest(stack.deps, { kind: 'rm', instance } as GpuCommand, {
      teamId: 'T0FAKE',
      channelId: 'C0GPU',
      userId: 'U0ADA',
      projectId: DEFAULT_PROJECT,
      requestedAt: Date.now(),
      step: { executionId: 'Fx1deny', callbackId: 'remove_machine', quiet: false },
    });
    if (result.status !== 'pending-approval')
      throw new Error(`expected pending-approval, got ${result.status}`);
    const since = stack.slack.mark();
    expect(await decide({ id: result.approvalId, state: 'denied', reason: 'Keep it' })).toEqual({ ok: true });
    const failed = stack.slack.calls.slice(since).filter((c) => c.method === 'functions.completeError');
    expect(failed).toHaveLength(1);
    expect(failed[0]!.body.function_execution_id).toBe('Fx1deny');
    expect(String(failed[0]!.body.error)).toContain('Keep it');
  });

  it('refuses a click the policy does not allow with its sentence, on the audit trail with what was tried', async () => {
    const asked = await ask();
    const sentence = 'You cannot approve your own request. Nothing was changed.';
    const edits = cardEdits(asked);
    for (const state of ['approved', 'denied'] as const) {
      const refused = await decide({
        id: asked.id,
        clicker: 'U0ADA',
        state,
        mayDecide: async () => sentence,
      });
      expect(refused).toEqual({ ok: false, message: sentence });
    }
    expect((await stack.guardrails.approvals.get(asked.id))?.state).toBe('pending');
    expect(await jobsOf(asked.id)).toHaveLength(0);
    expect(cardEdits(asked)).toBe(edits);
    const refusals = (await auditOf(asked.id)).filter((e) => e.outcome === 'refused');
    expect(refusals.map((e) => [e.event, e.actor, e.approver, e.parameters?.tried])).toEqual([
      ['decision', 'U0ADA', 'U0ADA', 'approved'],
      ['decision', 'U0ADA', 'U0ADA', 'denied'],
    ]);
    expect(refusals[0]!.parameters).toMatchObject({ instance: `dc-${n}` });
  });

  it('says a request it does not know changed nothing', async () => {
    expect(await decide({ id: 'apr-nosuchrequest' })).toEqual({
      ok: false,
      message: 'This request is no longer known to gpuops; nothing was changed.',
    });
  });

  it('closes a request clicked after its expiry, for everyone, and runs nothing', async () => {
    const { request } = await stack.guardrails.approvals.create({
      command: { kind: 'rm', instance: 'late-1' },
      ctx: { teamId: 'T0FAKE', channelId: 'C0GPU', userId: 'U0ADA', requestedAt: Date.now() - 7_200_000 },
      reasons: ['always'],
      approvalChannel: APPROVALS,
      expiresAfterSeconds: 3600,
      now: Date.now() - 7_200_000,
    });
    const card = await stack.deps.ports.post(APPROVALS, { text: 'card' });
    await stack.guardrails.approvals.setCard(request.id, card!);
    outcomes.length = 0;
    const late = await decide({ id: request.id });
    expect(late).toEqual({
      ok: false,
      message: expect.stringMatching(
        /^This request expired <!date\^\d+\^.*>, before your click; nothing was done\. The requester can ask again\.$/,
      ),
    });
    expect(late.ok === false && late.message).toContain(`<!date^${Math.floor(request.expiresAt / 1000)}^`);
    expect(outcomes).toEqual(['expired']);
    expect((await stack.guardrails.approvals.get(request.id))?.state).toBe('expired');
    expect(stack.slack.message(card!.channel, card!.ts)?.text).toMatch(/^Expired: \/gpu rm late-1/);
    expect(await jobsOf(request.id)).toHaveLength(0);
    const entries = await auditOf(request.id);
    expect(entries.map((e) => [e.event, e.approver, e.outcome])).toEqual([['decision', 'gpuops', 'expired']]);
    // Clicked again: it says it expired, and still changes nothing.
    const again = await decide({ id: request.id, state: 'denied', reason: 'late' });
    expect(again).toEqual({
      ok: false,
      message: expect.stringMatching(/^It expired .*; nothing was changed\.$/),
    });
  });

  it('answers a second click with the first decision, and repairs the card only once its edit is overdue', async () => {
    const asked = await ask();
    expect(await decide({ id: asked.id })).toEqual({ ok: true });
    const edits = cardEdits(asked);
    // Right after the decision: told, and the card (just edited) is left alone.
    const soon = await decide({ id: asked.id, state: 'denied', clicker: 'U0CAROL' });
    expect(soon).toEqual({
      ok: false,
      message: expect.stringMatching(
        /^Already approved by <@U0BOB> <!date\^\d+\^.*>; nothing was changed\.$/,
      ),
    });
    expect(cardEdits(asked)).toBe(edits);
    // Later, a click finds the card still showing buttons (its edit was lost): it is edited again.
    await ageDecision(asked.id, 60_000);
    const later = await decide({ id: asked.id, state: 'denied', clicker: 'U0CAROL' });
    expect(later.ok).toBe(false);
    expect(cardEdits(asked)).toBe(edits + 1);
    expect(cardText(asked)).toMatch(/^Approved by <@U0BOB>: /);
    expect(await jobsOf(asked.id)).toHaveLength(1);
  });

  it('queues a left-behind approval on a later Approve, never on a Deny', async () => {
    const asked = await ask();
    await stack.guardrails.approvals.decide(asked.id, {
      state: 'approved',
      by: 'U0BOB',
      at: Date.now() - 60_000,
      runBy: Date.now() + 60_000,
    });
    const deny = await decide({ id: asked.id, state: 'denied' });
    expect(deny).toEqual({ ok: false, message: expect.stringMatching(/; nothing was changed\.$/) });
    expect(await jobsOf(asked.id)).toHaveLength(0);
    const approve = await decide({ id: asked.id });
    expect(approve).toEqual({ ok: false, message: expect.stringMatching(/; nothing was changed\.$/) });
    expect(await jobsOf(asked.id)).toHaveLength(1);
    expect(JSON.stringify(stack.slack.message(asked.card.channel, asked.card.ts)?.blocks)).toContain(
      '*Queued*',
    );
  });

  it('writes a decision’s audit entry that missed the trail on the next late click, once', async () => {
    const asked = await ask();
    const at = Date.now() - 60_000;
    const audit = {
      event: 'decision' as const,
      actor: 'U0ADA',
      approver: 'U0BOB',
      operation: 'rm',
      outcome: 'denied',
      approvalId: asked.id,
      channel: APPROVALS,
    };
    await stack.guardrails.approvals.decide(asked.id, { state: 'denied', by: 'U0BOB', at, audit });
    expect((await auditOf(asked.id)).filter((e) => e.event === 'decision')).toHaveLength(0);
    await decide({ id: asked.id });
    await decide({ id: asked.id });
    expect((await auditOf(asked.id)).filter((e) => e.event === 'decision')).toHaveLength(1);
    expect((await stack.guardrails.approvals.get(asked.id))?.pendingAudit).toBeUndefined();
  });
});
