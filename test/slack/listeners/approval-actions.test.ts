import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  APPROVE_ACTION,
  DENY_ACTION,
  DENY_CALLBACK,
  DENY_REASON_ACTION,
  DENY_REASON_BLOCK,
} from '../../../src/commands/approvals/render.js';
import type { GpuCommand } from '../../../src/commands/registry.js';
import { acceptRequest } from '../../../src/requests/accept-request.js';
import { registerApprovalActions } from '../../../src/slack/listeners/approval-actions.js';
import {
  DEFAULT_PROJECT,
  expectCleanSlack,
  type ListenerStack,
  policyOf,
  startListenerStack,
  withRedisGone,
} from '../../support/listener-stack.js';
import { blockActionsPayload, viewSubmissionPayload } from '../../support/slack-driver.js';

// Approve and Deny on approval cards, and the Deny reason form (src/slack/listeners/approval-actions.ts)
// alone. Requests are made through the request pipeline (as `/gpu rm` would make them); the clicks come
// signed over HTTP. Ada asks, Bob approves, Carol may approve nothing.

const APPROVALS = 'C0APPROVE';
const POLICY = policyOf(
  'approvals.yaml',
  'default_role: operator',
  'approvals:',
  '  approvers: { users: [U0BOB] }',
  `  channel: ${APPROVALS}`,
  '  expires_after: 1h',
);

describe('the approval card buttons', () => {
  let stack: ListenerStack;
  let n = 0;
  beforeAll(async () => {
    stack = await startListenerStack(registerApprovalActions, { policy: POLICY });
  });
  afterAll(async () => {
    expectCleanSlack(stack);
    await stack?.close();
  });

  /** Ada asks to remove a machine: the card goes to the approvers, her message waits in C0GPU. */
  async function ask(): Promise<{ id: string; card: { channel: string; ts: string }; mine: string }> {
    const instance = `old-${++n}`;
    await stack.machines(...Array.from({ length: n }, (_, i) => `old-${i + 1}`));
    const command = { kind: 'rm', instance } as GpuCommand;
    const result = await acceptRequest(stack.deps, command, {
      teamId: 'T0FAKE',
      channelId: 'C0GPU',
      userId: 'U0ADA',
      projectId: DEFAULT_PROJECT,
      requestedAt: Date.now(),
    });
    if (result.status !== 'pending-approval' || !result.card || !result.message) {
      throw new Error(`expected a request waiting for approval, got ${result.status}`);
    }
    return { id: result.approvalId, card: result.card, mine: result.message.ts };
  }

  const click = (action: string, id: string | undefined, userId: string, ts?: string) =>
    stack.press(action, id, { userId, channelId: APPROVALS, ...(ts ? { ts } : {}) });

  it('queues the approved request once, as its own job, and shows the decision on the card and the request', async () => {
    const { id, card, mine } = await ask();
    // Two approvers' clicks arrive together, and then one again: one decision, one job.
    await Promise.all([
      click(APPROVE_ACTION, id, 'U0BOB', card.ts),
      click(APPROVE_ACTION, id, 'U0BOB', card.ts),
    ]);
    await click(APPROVE_ACTION, id, 'U0BOB', card.ts);
    const jobs = await stack.jobs();
    expect(jobs.map((j) => j.id)).toEqual([id]);
    expect(jobs[0]!.data).toMatchObject({
      command: { kind: 'rm', instance: 'old-1' },
      ctx: { userId: 'U0ADA', channelId: 'C0GPU' },
      approvalId: id,
    });
    expect(stack.slack.message(APPROVALS, card.ts)?.text).toMatch(/^Approved by <@U0BOB>/);
    expect(stack.slack.message('C0GPU', mine)?.text).toMatch(/^Approved by <@U0BOB>/);
    expect(
      await stack.ephemeral('U0BOB', /^Already approved by <@U0BOB> .*; nothing was changed\.$/),
    ).toBeTruthy();
    expect((await stack.guardrails.approvals.get(id))?.state).toBe('approved');
  });

  it('refuses the requester approving their own request, and someone who is no approver', async () => {
    const { id } = await ask();
    await click(APPROVE_ACTION, id, 'U0ADA');
    await click(APPROVE_ACTION, id, 'U0CAROL');
    expect(stack.ephemeralsTo('U0ADA').at(-1)).toMatch(/yourself.* Nothing was changed\.$/);
    expect(stack.ephemeralsTo('U0CAROL').at(-1)).toMatch(/Nothing was changed\.$/);
    expect((await stack.guardrails.approvals.get(id))?.state).toBe('pending');
    expect((await stack.jobs()).map((j) => j.id)).not.toContain(id);
    // Each refused click is on the audit trail.
    const refused = (await stack.guardrails.audit.latest(20)).filter(
      (e) => e.approvalId === id && e.outcome === 'refused',
    );
    expect(refused.map((e) => e.approver).sort()).toEqual(['U0ADA', 'U0CAROL']);
  });

  it('says a request it no longer knows changed nothing, and ignores a button with no request', async () => {
    const before = (await stack.jobs()).length;
    await click(APPROVE_ACTION, 'apr-nosuchrequest', 'U0BOB');
    expect(stack.ephemeralsTo('U0BOB').at(-1)).toBe(
      'This request is no longer known to gpuops; nothing was changed.',
    );
    const told = stack.ephemeralsTo('U0BOB').length;
    await click(APPROVE_ACTION, undefined, 'U0BOB');
    expect(stack.ephemeralsTo('U0BOB')).toHaveLength(told);
    expect(await stack.jobs()).toHaveLength(before);
  });

  it('closes a request clicked after its expiry: nothing runs, the approver is told', async () => {
    const { request } = await stack.guardrails.approvals.create({
      command: { kind: 'rm', instance: 'late-1' },
      ctx: { teamId: 'T0FAKE', channelId: 'C0GPU', userId: 'U0ADA', requestedAt: Date.now() - 7_200_000 },
      reasons: ['always'],
      approvalChannel: APPROVALS,
      expiresAfterSeconds: 3600,
      now: Date.now() - 7_200_000,
    });
    await click(APPROVE_ACTION, request.id, 'U0BOB');
    expect(stack.ephemeralsTo('U0BOB').at(-1)).toMatch(
      /^This request expired .*, before your click; nothing was done\. The requester can ask again\.$/,
    );
    expect((await stack.guardrails.approvals.get(request.id))?.state).toBe('expired');
    expect((await stack.jobs()).map((j) => j.id)).not.toContain(request.id);
  });

  it('asks a reason before a Deny, keeps the form open without one, and then denies with nothing queued', async () => {
    const { id, card, mine } = await ask();
    const since = stack.slack.mark();
    await click(DENY_ACTION, id, 'U0BOB', card.ts);
    const opened = await stack.slack.waitFor('views.open', () => true, 5_000, since);
    const view = opened.body.view as { callback_id: string; private_metadata: string };
    expect(view.callback_id).toBe(DENY_CALLBACK);
    expect((await stack.guardrails.approvals.get(id))?.state).toBe('pending');

    const submit = (reason: string) =>
      stack.interact(
        viewSubmissionPayload({
          callbackId: DENY_CALLBACK,
          userId: 'U0BOB',
          privateMetadata: view.private_metadata,
          values: {
            [DENY_REASON_BLOCK]: { [DENY_REASON_ACTION]: { type: 'plain_text_input', value: reason } },
          },
        }),
      );
    const blank = await submit('   ');
    expect(blank.json()).toEqual({
      response_action: 'errors',
      errors: { [DENY_REASON_BLOCK]: 'Say why, so the requester knows what to do instead.' },
    });
    expect((await stack.guardrails.approvals.get(id))?.state).toBe('pending');

    const denied = await submit('Not during the freeze');
    expect(denied.status).toBe(200);
    expect(denied.text).toBe('');
    const stored = await stack.guardrails.approvals.get(id);
    expect(stored?.state).toBe('denied');
    expect(stored?.decision?.reason).toBe('Not during the freeze');
    expect(stack.slack.message(APPROVALS, card.ts)?.text).toMatch(/^Denied by <@U0BOB>/);
    expect(JSON.stringify(stack.slack.message('C0GPU', mine)?.blocks)).toContain('Not during the freeze');
    expect((await stack.jobs()).map((j) => j.id)).not.toContain(id);
    // A late Approve on the denied card runs nothing.
    await click(APPROVE_ACTION, id, 'U0BOB', card.ts);
    expect(stack.ephemeralsTo('U0BOB').at(-1)).toMatch(
      /^Already denied by <@U0BOB> .*; nothing was changed\.$/,
    );
    expect((await stack.jobs()).map((j) => j.id)).not.toContain(id);
  });

  it('queues an approved request whose job never reached the queue when its card is clicked again', async () => {
    const { id, card } = await ask();
    // Approved 20 s ago, and then Redis failed before the job was added: no job, no enqueuedAt.
    const decided = await stack.guardrails.approvals.decide(id, {
      state: 'approved',
      by: 'U0BOB',
      at: Date.now() - 20_000,
    });
    expect(decided.outcome).toBe('decided');
    expect((await stack.jobs()).map((j) => j.id)).not.toContain(id);
    await click(APPROVE_ACTION, id, 'U0BOB', card.ts);
    expect((await stack.jobs()).filter((j) => j.id === id)).toHaveLength(1);
    expect((await stack.guardrails.approvals.get(id))?.enqueuedAt).toBeDefined();
    // The card, left with its buttons by the lost edit, shows the decision now.
    expect(stack.slack.message(APPROVALS, card.ts)?.text).toMatch(/^Approved by <@U0BOB>/);
    // A Deny on it, however late, queues nothing more.
    await click(DENY_ACTION, id, 'U0BOB', card.ts);
    expect((await stack.jobs()).filter((j) => j.id === id)).toHaveLength(1);
  });

  it('approves from the Home tab, answering there', async () => {
    const { id } = await ask();
    await stack.interact(
      blockActionsPayload({
        actionId: APPROVE_ACTION,
        value: id,
        userId: 'U0BOB',
        view: { id: 'V0HOMEBOB', type: 'home', hash: 'h1', blocks: [], private_metadata: '' },
      }),
    );
    expect((await stack.jobs()).filter((j) => j.id === id)).toHaveLength(1);
    const home = stack.slack
      .callsTo('views.publish')
      .filter((c) => c.body.user_id === 'U0BOB')
      .at(-1);
    expect(JSON.stringify(home?.body.view)).toContain(':white_check_mark: Approved.');
  });

  it('refuses a Deny from someone who may not decide, without asking them for a reason', async () => {
    const { id } = await ask();
    const since = stack.slack.mark();
    await click(DENY_ACTION, id, 'U0CAROL');
    expect(stack.ephemeralsTo('U0CAROL').at(-1)).toMatch(/Nothing was changed\.$/);
    expect(stack.slack.calls.slice(since).filter((c) => c.method === 'views.open')).toEqual([]);
    expect((await stack.guardrails.approvals.get(id))?.state).toBe('pending');
  });
});

describe('the approval card buttons, Redis gone', () => {
  it('tells the approver nothing was changed', async () => {
    await withRedisGone(registerApprovalActions, { policy: POLICY }, async (stack) => {
      await stack.press(APPROVE_ACTION, 'apr-any', { userId: 'U0BOB', channelId: APPROVALS });
      expect(stack.ephemeralsTo('U0BOB')).toEqual([
        'gpuops cannot reach its store right now; nothing was changed. Try again in a minute.',
      ]);
    });
  });
});
