import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuCommand } from '../../src/commands/registry.js';
import type { JobContext } from '../../src/jobs/job-data.js';
import { type AcceptExtra, acceptRequest } from '../../src/requests/accept-request.js';
import { markHomeOpened } from '../../src/store/home-state.js';
import {
  DEFAULT_PROJECT,
  expectCleanSlack,
  type ListenerStack,
  policyOf,
  startListenerStack,
} from '../support/listener-stack.js';
import { until } from '../support/until.js';

// The approval step of the request pipeline (src/requests/request-approval.ts) through its one door,
// acceptRequest: a request that waits for an approver is stored once, its card goes to the approvals
// channel, the requester is told where it went and until when, and a repeat or a replay makes no
// second card. Ada asks; Bob and Cat approve; only Bob has opened his Home tab.

const APPROVALS = 'C0APPROVE';
const POLICY = policyOf(
  'approval-step.yaml',
  'default_role: operator',
  'approvals:',
  '  approvers: { users: [U0BOB, U0CAT] }',
  `  channel: ${APPROVALS}`,
  '  expires_after: 1h',
);

describe('the approval step', () => {
  let stack: ListenerStack;
  let n = 0;
  beforeAll(async () => {
    stack = await startListenerStack(() => {}, {
      policy: POLICY,
      slack: { conversations: { C0HIDDEN: { kind: 'private' } } },
    });
    await stack.machines(...Array.from({ length: 20 }, (_, i) => `as-${i + 1}`));
    await markHomeOpened(stack.store, 'U0BOB', 'D0BOB');
  });
  afterAll(async () => {
    expectCleanSlack(stack);
    await stack?.close();
  });

  const ctx = (extra: Partial<JobContext> = {}): JobContext => ({
    teamId: 'T0FAKE',
    channelId: 'C0GPU',
    userId: 'U0ADA',
    projectId: DEFAULT_PROJECT,
    requestedAt: Date.now(),
    ...extra,
  });
  const rm = (instance = `as-${++n}`) => ({ kind: 'rm', instance }) as GpuCommand;
  const ask = (command: GpuCommand, c = ctx(), extra: AcceptExtra = {}) =>
    acceptRequest(stack.deps, command, c, extra);
  const cards = () => stack.slack.callsTo('chat.postMessage').filter((c) => c.body.channel === APPROVALS);

  it('sends the card to the approvers, tells the requester where and until when, and audits it', async () => {
    const command = rm();
    const since = stack.slack.mark();
    const result = await ask(command);
    if (result.status !== 'pending-approval')
      throw new Error(`expected pending-approval, got ${result.status}`);
    expect(result.approvalChannel).toBe(APPROVALS);
    expect(result.card?.channel).toBe(APPROVALS);
    expect(result.message?.channel).toBe('C0GPU');
    expect(result.notice).toMatch(
      new RegExp(
        `^:raised_hand: \`/gpu rm ${command.kind === 'rm' ? command.instance : ''}\` needs an approval: .+ I sent it to <#${APPROVALS}>, where .+ can approve or deny it until <!date\\^\\d+\\^.*>\\. You will see the decision on your request\\.$`,
      ),
    );
    const stored = await stack.guardrails.approvals.get(result.approvalId);
    expect(stored).toMatchObject({
      state: 'pending',
      approvalChannel: APPROVALS,
      card: result.card,
      requesterMessage: result.message,
    });
    expect(stored!.expiresAt - stored!.createdAt).toBe(3_600_000);
    expect(stack.slack.message(APPROVALS, result.card!.ts)?.text).toBeTruthy();
    expect(stack.slack.message('C0GPU', result.message!.ts)?.text).toMatch(
      /^Waiting for approval in <#C0APPROVE>/,
    );
    const entry = (await stack.guardrails.audit.latest(20)).find((e) => e.approvalId === result.approvalId);
    expect(entry).toMatchObject({
      event: 'request',
      actor: 'U0ADA',
      operation: 'rm',
      outcome: 'needs-approval',
    });
    // Bob, who opened his Home tab, sees the request there without opening it again; Cat did not.
    const published = await until('Bob’s Home published again', () =>
      stack.slack.calls.slice(since).find((c) => c.method === 'views.publish' && c.body.user_id === 'U0BOB'),
    );
    expect(published).toBeTruthy();
    expect(
      stack.slack.calls
        .slice(since)
        .filter((c) => c.method === 'views.publish' && c.body.user_id !== 'U0BOB'),
    ).toEqual([]);
  });

  it('finds the first request on a double submission and on a replay, with no second card', async () => {
    const command = rm();
    const trigger = { id: `TR-${n}`, seconds: 300 };
    const first = await ask(command, ctx(), { trigger });
    if (first.status !== 'pending-approval') throw new Error('expected pending-approval');
    const count = cards().length;
    const replay = await ask(command, ctx(), { trigger });
    expect(replay).toEqual({ status: 'duplicate', jobId: first.approvalId, replay: true });
    const repeat = await ask(command, ctx());
    expect(repeat).toEqual({ status: 'duplicate', jobId: first.approvalId });
    expect(cards()).toHaveLength(count);
  });

  it('makes a new request once something else was asked of the same machine', async () => {
    const command = rm();
    const first = await ask(command);
    if (first.status !== 'pending-approval') throw new Error('expected pending-approval');
    const instance = command.kind === 'rm' ? command.instance : '';
    const stop = await ask({ kind: 'stop', instance } as GpuCommand);
    expect(stop.status).toBe('queued');
    const again = await ask(command);
    expect(again.status).toBe('pending-approval');
    expect(again.status === 'pending-approval' && again.approvalId).not.toBe(first.approvalId);
  });

  it('says so when the card cannot be posted, and how approvers can still decide', async () => {
    const hidden = policyOf(
      'approval-step-hidden.yaml',
      'default_role: operator',
      'approvals:',
      '  approvers: { users: [U0BOB] }',
      '  channel: C0HIDDEN',
    );
    const result = await acceptRequest(
      { ...stack.deps, guardrails: { ...stack.guardrails, policy: hidden } },
      rm(),
      ctx(),
    );
    if (result.status !== 'pending-approval') throw new Error('expected pending-approval');
    expect(result.card).toBeUndefined();
    expect(result.notice).toMatch(
      /:warning: I could not post it to <#C0HIDDEN> \(Slack said "not_in_channel"\): invite gpuops there\. Approvers can still decide it with `\/gpu approvals` until <!date/,
    );
    expect((await stack.guardrails.approvals.get(result.approvalId))?.state).toBe('pending');
  });

  it('posts nothing before the caller has answered Slack, and then corrects the notice if the card failed', async () => {
    const since = stack.slack.mark();
    const result = await ask(rm(), ctx(), { deferPosts: true });
    if (result.status !== 'pending-approval') throw new Error('expected pending-approval');
    expect(stack.slack.calls.slice(since).filter((c) => c.method === 'chat.postMessage')).toEqual([]);
    expect(result.notice).toMatch(/^:raised_hand: .* I sent it to <#C0APPROVE>/);
    expect(await result.followUp!()).toBeUndefined();
    const posted = stack.slack.calls.slice(since).filter((c) => c.method === 'chat.postMessage');
    expect(posted.map((c) => c.body.channel).sort()).toEqual([APPROVALS, 'C0GPU']);
    const stored = await stack.guardrails.approvals.get(result.approvalId);
    expect(stored?.card?.channel).toBe(APPROVALS);
    expect(stored?.requesterMessage?.channel).toBe('C0GPU');

    stack.slack.failWith('chat.postMessage', 'channel_not_found', 1, { channel: APPROVALS });
    const failing = await ask(rm(), ctx(), { deferPosts: true });
    if (failing.status !== 'pending-approval') throw new Error('expected pending-approval');
    expect(await failing.followUp!()).toMatch(
      /I could not post it to <#C0APPROVE> \(Slack said "channel_not_found"\)/,
    );
  });

  it('posts no waiting message for a quiet workflow step, only the card', async () => {
    const since = stack.slack.mark();
    const result = await ask(
      rm(),
      ctx({ step: { executionId: 'Fx9', callbackId: 'remove_machine', quiet: true } }),
    );
    if (result.status !== 'pending-approval') throw new Error('expected pending-approval');
    expect(result.message).toBeUndefined();
    const posted = stack.slack.calls.slice(since).filter((c) => c.method === 'chat.postMessage');
    expect(posted.map((c) => c.body.channel)).toEqual([APPROVALS]);
  });

  it('takes a request back when Redis cannot keep it on two servers, and says nothing was sent', async () => {
    const command = rm();
    const since = stack.slack.mark();
    await expect(
      acceptRequest(
        {
          ...stack.deps,
          replicated: async () => {
            throw new Error('no replica took the write');
          },
        },
        command,
        ctx(),
      ),
    ).rejects.toThrow('no replica took the write');
    expect(stack.slack.calls.slice(since).filter((c) => c.method === 'chat.postMessage')).toEqual([]);
    const pending = await stack.guardrails.approvals.listPending();
    expect(pending.map((p) => (p.command as { instance?: string }).instance)).not.toContain(
      command.kind === 'rm' ? command.instance : '',
    );
  });
});
