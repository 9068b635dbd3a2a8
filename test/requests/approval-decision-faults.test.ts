import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuCommand } from '../../src/commands/registry.js';
import { createLogger } from '../../src/log/logger.js';
import { type DecisionInput, decideApproval } from '../../src/requests/decide-approval.js';
import type { LifecycleDeps } from '../../src/requests/drive-approved.js';
import { slackDecisionPorts } from '../../src/slack/decision-ports.js';
import { registerApprovalActions } from '../../src/slack/listeners/approval-actions.js';
import { createAudit } from '../../src/store/audit.js';
import {
  expectCleanSlack,
  type ListenerStack,
  policyOf,
  startListenerStack,
} from '../support/listener-stack.js';

// An approver's decision (src/requests/decide-approval.ts) at its edges: how long a request waited as
// the audit trail records it, an audit trail that refuses every entry, and a request that vanishes
// while the click is being checked. Real Redis, the real BullMQ queue, the fake Slack Web API behind
// the production decision ports; what is checked is the click's answer, the queue, the audit trail
// and the operator's log.

const APPROVALS = 'C0APPROVE';
const POLICY = policyOf(
  'decision-faults.yaml',
  'default_role: operator',
  'approvals:',
  '  approvers: { users: [U0BOB] }',
  `  channel: ${APPROVALS}`,
  '  expires_after: 1h',
);
const mayAlways = async () => undefined;

interface LogLine {
  readonly msg?: string;
  readonly approvalId?: string;
  readonly err?: { readonly message?: string };
}

describe('an approver’s decision at its edges', () => {
  let stack: ListenerStack;
  let n = 0;
  beforeAll(async () => {
    stack = await startListenerStack(registerApprovalActions, { policy: POLICY });
  });
  afterAll(async () => {
    expectCleanSlack(stack);
    await stack?.close();
  });

  const deps = (extra: Partial<LifecycleDeps> = {}): LifecycleDeps => ({
    ...stack.deps,
    chat: slackDecisionPorts(stack.deps),
    ...extra,
  });
  const decide = (input: Partial<DecisionInput> & { id: string }, extra?: Partial<LifecycleDeps>) =>
    decideApproval(deps(extra), { clicker: 'U0BOB', state: 'approved', mayDecide: mayAlways, ...input });

  /** Ada's request to remove a machine, asked `ago` ms back, its card in the approvals channel. */
  async function askedAgo(ago: number): Promise<string> {
    const instance = `df-${++n}`;
    const { request } = await stack.guardrails.approvals.create({
      command: { kind: 'rm', instance } as GpuCommand,
      ctx: { teamId: 'T0FAKE', channelId: 'C0GPU', userId: 'U0ADA', requestedAt: Date.now() - ago },
      reasons: ['always'],
      approvalChannel: APPROVALS,
      expiresAfterSeconds: 3600,
      now: Date.now() - ago,
    });
    const card = await stack.deps.ports.post(APPROVALS, { text: 'card' });
    await stack.guardrails.approvals.setCard(request.id, card!);
    return request.id;
  }

  const reqKey = (id: string) => `${stack.store.prefix}:{approvals}:req:${id}`;
  const jobsOf = async (id: string) => (await stack.jobs()).filter((j) => j.id === id);
  const auditOf = async (id: string) =>
    (await stack.guardrails.audit.latest(200)).filter((e) => e.approvalId === id).reverse();
  const logged = (msg: string): LogLine[] =>
    stack.logLines.map((l) => JSON.parse(l) as LogLine).filter((l) => l.msg === msg);

  /** An audit trail whose key holds something else: Redis refuses every entry. */
  async function brokenAudit(): Promise<Partial<LifecycleDeps>> {
    const prefix = `${stack.store.prefix}-broken-${n}`;
    await stack.redis.set(`${prefix}:audit`, 'not a stream');
    const audit = createAudit(stack.redis, {
      prefix,
      retentionSeconds: 3600,
      log: createLogger({ level: 'silent' }),
    });
    return { guardrails: { ...stack.guardrails, audit } };
  }

  it('records on the audit trail how long a request waited, for a refused click and for the decision', async () => {
    const id = await askedAgo(5_000);
    const refused = await decide({ id, clicker: 'U0ADA', mayDecide: async () => 'Not yours to approve.' });
    expect(refused).toEqual({ ok: false, message: 'Not yours to approve.' });
    expect(await decide({ id })).toEqual({ ok: true });
    const entries = (await auditOf(id)).filter((e) => e.event === 'decision');
    expect(entries.map((e) => e.outcome)).toEqual(['refused', 'approved']);
    for (const entry of entries) {
      expect(entry.durationMs).toBeGreaterThanOrEqual(5_000);
      expect(entry.durationMs).toBeLessThan(60_000);
    }
  });

  it('keeps a decision the audit trail refuses, tells the operator which, and writes it on a later click', async () => {
    const id = await askedAgo(1_000);
    const broken = await brokenAudit();
    const refused = await decide({ id, clicker: 'U0ADA', mayDecide: async () => 'Not yours.' }, broken);
    expect(refused).toEqual({ ok: false, message: 'Not yours.' });
    expect(logged('could not append to the audit trail')).toEqual([
      expect.objectContaining({
        err: expect.objectContaining({ message: expect.stringContaining('WRONGTYPE') }),
      }),
    ]);

    expect(await decide({ id }, broken)).toEqual({ ok: true });
    expect(await jobsOf(id)).toHaveLength(1);
    expect(logged('could not append a decision to the audit trail')).toEqual([
      expect.objectContaining({
        approvalId: id,
        err: expect.objectContaining({ message: expect.stringContaining('WRONGTYPE') }),
      }),
    ]);
    expect((await stack.guardrails.approvals.get(id))?.pendingAudit).toMatchObject({ outcome: 'approved' });

    // A click once the card is overdue, with the trail working again: the entry is written, once,
    // and a later click finds nothing left to write and logs nothing.
    const key = reqKey(id);
    const decision = JSON.parse(String(await stack.redis.hget(key, 'decision'))) as { at: number };
    await stack.redis.hset(key, 'decision', JSON.stringify({ ...decision, at: decision.at - 60_000 }));
    for (let i = 0; i < 2; i++) expect((await decide({ id, clicker: 'U0CAROL' })).ok).toBe(false);
    expect((await auditOf(id)).filter((e) => e.outcome === 'approved')).toHaveLength(1);
    expect(logged('could not append a decision to the audit trail')).toHaveLength(1);
  });

  it('says a request that vanished while the click was checked is no longer known, and queues nothing', async () => {
    const id = await askedAgo(1_000);
    const vanished = await decide({
      id,
      mayDecide: async () => {
        await stack.redis.del(reqKey(id));
        return undefined;
      },
    });
    expect(vanished).toEqual({
      ok: false,
      message: 'This request is no longer known to gpuops; nothing was changed.',
    });
    expect(await jobsOf(id)).toHaveLength(0);
  });
});
