import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCommand } from '../../src/commands/parse-command.js';
import type { GpuCommand } from '../../src/commands/registry.js';
import type { JobContext } from '../../src/jobs/job-data.js';
import type { ApprovalOutcome } from '../../src/policy/guardrails.js';
import type { AcceptDeps } from '../../src/requests/accept-kit.js';
import { acceptRequest } from '../../src/requests/accept-request.js';
import { AddGate, GaveUpError } from '../../src/requests/add-gate.js';
import { MAKER_POST_CLAIM_MS, POST_CLAIM_MS } from '../../src/requests/post-approval.js';
import { approvalIdFor } from '../../src/store/approvals.js';
import { readCatalog, writeCatalog } from '../../src/store/catalog-cache.js';
import { markHomeOpened } from '../../src/store/home-state.js';
import {
  DEFAULT_PROJECT,
  expectCleanSlack,
  type ListenerStack,
  policyOf,
  startListenerStack,
} from '../support/listener-stack.js';

// What a request sent for approval shows and keeps (src/requests/request-approval.ts): the card's cost,
// place and capacity, no waiting message for a kind answered privately, the same request met again,
// a request taken back when Redis cannot keep it on two servers, the notice when Slack slows gpuops
// down or a sweep is posting the card already, the approvals counted, and the approvers' Home tabs.
// Ada asks; Bob approves and has opened his Home tab.

const APPROVALS = 'C0APPROVE';
const H100 = 'h100-hgx-80gb.8x';
const POLICY = policyOf(
  'approval-notice.yaml',
  'default_role: operator',
  'approvals:',
  '  approvers: { users: [U0BOB] }',
  '  always: [rm, configs]',
  '  threshold_per_hour: 10',
  `  channel: ${APPROVALS}`,
);

describe('a request sent for approval', () => {
  let stack: ListenerStack;
  let n = 0;
  beforeAll(async () => {
    stack = await startListenerStack(() => {}, { policy: POLICY });
    await stack.machines(...Array.from({ length: 20 }, (_, i) => `an-${i + 1}`));
    // Three 8×H100 free now, as shape C's capacity listing says.
    const cached = await readCatalog(stack.store, DEFAULT_PROJECT);
    await writeCatalog(stack.store, DEFAULT_PROJECT, {
      ...cached!.catalog,
      instanceTypes: cached!.catalog.instanceTypes.map((t) => (t.name === H100 ? { ...t, capacity: 3 } : t)),
    });
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
  const rm = (instance = `an-${++n}`) => ({ kind: 'rm', instance }) as GpuCommand;
  const pending = async (result: Awaited<ReturnType<typeof acceptRequest>>) => {
    if (result.status !== 'pending-approval')
      throw new Error(`expected pending-approval, got ${result.status}`);
    return result;
  };
  const cardText = (ts: string) => JSON.stringify(stack.slack.message(APPROVALS, ts)?.blocks ?? []);

  it("shows the approvers a create's cost, project and capacity with its time, and keeps the cost", async () => {
    const parsed = parseCommand(`create an-new-1 ${H100}`);
    if (!parsed.ok) throw new Error(parsed.error.message);
    const result = await pending(await acceptRequest(stack.deps, parsed.command, ctx()));
    const stored = await stack.guardrails.approvals.get(result.approvalId);
    expect(stored?.cost).toMatchObject({ known: true, instanceType: H100 });
    expect(stored?.display).toMatchObject({
      project: `project ${DEFAULT_PROJECT}`,
      capacity: `3 machines of ${H100} available now`,
      approvers: '<@U0BOB>',
    });
    const card = cardText(result.card!.ts);
    expect(card).toMatch(/\*Cost\*\\n[^"]*\$23\.12/);
    expect(card).toContain(`*Where*\\nproject ${DEFAULT_PROJECT}`);
    expect(card).toMatch(/\*Capacity\*\\n[^"]*available now \(at <!date\^\d+\^/);
    expect(card).toContain('approvers: <@U0BOB>');
  });

  it('posts only the card, no waiting message, for a kind answered privately', async () => {
    const parsed = parseCommand('configs');
    if (!parsed.ok) throw new Error(parsed.error.message);
    const since = stack.slack.mark();
    const result = await pending(await acceptRequest(stack.deps, parsed.command, ctx()));
    expect(result.message).toBeUndefined();
    const posted = stack.slack.calls.slice(since).filter((c) => c.method === 'chat.postMessage');
    expect(posted.map((c) => c.body.channel)).toEqual([APPROVALS]);
  });

  it('finds the same request again, even after something else was asked of its machine, with no second card', async () => {
    const command = rm();
    const c = ctx();
    const first = await pending(await acceptRequest(stack.deps, command, c));
    const instance = (command as { instance: string }).instance;
    expect((await acceptRequest(stack.deps, { kind: 'stop', instance } as GpuCommand, ctx())).status).toBe(
      'queued',
    );
    const since = stack.slack.mark();
    // The very same request (a redelivery of it) after the stop: no new request, no card.
    expect(await acceptRequest(stack.deps, command, c)).toEqual({
      status: 'duplicate',
      jobId: first.approvalId,
    });
    expect(stack.slack.calls.slice(since).filter((c) => c.method === 'chat.postMessage')).toEqual([]);
  });

  it('is taken back, denied by gpuops with the reason, when Redis cannot keep it on two servers', async () => {
    const command = rm();
    const c = ctx();
    const deps: AcceptDeps = {
      ...stack.deps,
      replicated: async () => {
        throw new Error('no replica took the write');
      },
    };
    await expect(acceptRequest(deps, command, c)).rejects.toThrow('no replica took the write');
    // What `/gpu approvals` and the Home tab read: no longer pending, and why.
    const stored = await stack.guardrails.approvals.get(approvalIdFor(c, command));
    expect(stored).toMatchObject({
      state: 'denied',
      decision: { reason: 'gpuops could not store it on two servers' },
    });
  });

  // Before the rate limit below, whose hold on the approvals channel lasts a second.
  it('says Slack did not take the card, not that it asked to slow down, when Slack fails', async () => {
    stack.slack.failWith('chat.postMessage', 'internal_error', 1, { channel: APPROVALS });
    const result = await pending(await acceptRequest(stack.deps, rm(), ctx()));
    expect(result.card).toBeUndefined();
    expect(result.notice).toMatch(
      /:hourglass_flowing_sand: Slack did not take the card just now, so its card will be posted to <#C0APPROVE> shortly \(gpuops keeps trying\)/,
    );
    expect(result.notice).not.toContain('slow down');
  });

  it('says the card comes shortly when Slack asks gpuops to slow down', async () => {
    stack.slack.rateLimit('chat.postMessage', 1, 1, { channel: APPROVALS });
    const result = await pending(await acceptRequest(stack.deps, rm(), ctx()));
    expect(result.card).toBeUndefined();
    expect(result.notice).toMatch(
      /:hourglass_flowing_sand: Slack asked gpuops to slow down, so its card will be posted to <#C0APPROVE> shortly \(gpuops keeps trying\); <@U0BOB> can approve or deny it there, or with `\/gpu approvals`, until <!date/,
    );
  });

  it('leaves the notice as it was when a sweep took the posting after the maker was held up', async () => {
    const result = await pending(await acceptRequest(stack.deps, rm(), ctx(), { deferPosts: true }));
    // The listener was held up past its claim; the sweeper took the posting.
    const late = Date.now() + MAKER_POST_CLAIM_MS + 1;
    expect(await stack.guardrails.approvals.claimPosting(result.approvalId, POST_CLAIM_MS, late)).toBe(true);
    await expect(result.followUp!()).resolves.toBeUndefined();
  });

  it('leaves the card to a sweep that took its posting first, and says where it goes', async () => {
    const command = rm();
    const c = ctx();
    // Making the request safe on a replica took longer than the maker's claim; a sweep took the posting.
    const deps: AcceptDeps = {
      ...stack.deps,
      replicated: async () => {
        const late = Date.now() + MAKER_POST_CLAIM_MS + 1;
        await stack.guardrails.approvals.claimPosting(approvalIdFor(c, command), POST_CLAIM_MS, late);
      },
    };
    const since = stack.slack.mark();
    const result = await pending(await acceptRequest(deps, command, c));
    expect(result.card).toBeUndefined();
    expect(result.message).toBeUndefined();
    expect(result.notice).toMatch(/ I sent it to <#C0APPROVE>, where <@U0BOB> can approve or deny it until /);
    expect(stack.slack.calls.slice(since).filter((call) => call.method === 'chat.postMessage')).toEqual([]);
  });

  it('stores nothing and posts no card once the listener gave up waiting for it', async () => {
    const command = rm();
    const c = ctx();
    const gate = new AddGate();
    expect(gate.giveUp()).toBe(true);
    const since = stack.slack.mark();
    await expect(acceptRequest(stack.deps, command, c, { gate })).rejects.toBeInstanceOf(GaveUpError);
    expect(await stack.guardrails.approvals.get(approvalIdFor(c, command))).toBeUndefined();
    expect(stack.slack.calls.slice(since).filter((call) => call.method === 'chat.postMessage')).toEqual([]);
  });

  it('counts each request sent for approval once', async () => {
    const counted: ApprovalOutcome[] = [];
    const deps: AcceptDeps = {
      ...stack.deps,
      guardrails: { ...stack.guardrails, onApproval: (outcome) => counted.push(outcome) },
    };
    await pending(await acceptRequest(deps, rm(), ctx()));
    expect(counted).toEqual(['requested']);
  });

  describe("the approvers' Home tabs", () => {
    const warnings = (since: number) =>
      stack.logLines.slice(since).filter((l) => l.includes("could not refresh the approvers' Home tabs"));

    it('are published again for approvers who opened them, and a failure to do so is logged, not answered', async () => {
      const refreshed: string[][] = [];
      const deps: AcceptDeps = {
        ...stack.deps,
        ports: {
          ...stack.deps.ports,
          refreshHomes: async (users) => {
            refreshed.push([...users]);
            throw new Error('views.publish failed');
          },
        },
      };
      const since = stack.logLines.length;
      const result = await acceptRequest(deps, rm(), ctx());
      expect(result.status).toBe('pending-approval');
      expect(refreshed).toEqual([['U0BOB']]);
      expect(warnings(since)).toHaveLength(1);
      expect(warnings(since)[0]).toContain('views.publish failed');
    });

    it('are left alone, with no warning, by a door that publishes none', async () => {
      const { refreshHomes: _none, ...ports } = stack.deps.ports;
      const since = stack.logLines.length;
      const result = await acceptRequest({ ...stack.deps, ports }, rm(), ctx());
      expect(result.status).toBe('pending-approval');
      expect(warnings(since)).toEqual([]);
    });

    it('are not published when no approver has opened one', async () => {
      const calls: string[][] = [];
      const policy = policyOf(
        'approval-notice-closed.yaml',
        'default_role: operator',
        'approvals:',
        '  approvers: { users: [U0CAT] }',
        '  always: [rm]',
        `  channel: ${APPROVALS}`,
      );
      const deps: AcceptDeps = {
        ...stack.deps,
        guardrails: { ...stack.guardrails, policy },
        ports: { ...stack.deps.ports, refreshHomes: async (users) => void calls.push([...users]) },
      };
      await pending(await acceptRequest(deps, rm(), ctx()));
      expect(calls).toEqual([]);
    });
  });

  // Last: it cuts the stack's Redis for good.
  it('says the card comes shortly when Redis fails after the acknowledgement, blaming Redis, not Slack', async () => {
    const result = await pending(await acceptRequest(stack.deps, rm(), ctx(), { deferPosts: true }));
    stack.cutRedis();
    const since = stack.logLines.length;
    const notice = await result.followUp!();
    expect(notice).toMatch(
      /gpuops could not reach its Redis to post the card just now, so its card will be posted to <#C0APPROVE> shortly \(gpuops keeps trying\)/,
    );
    expect(notice).not.toContain('Slack asked');
    const warned = stack.logLines.slice(since).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(warned).toContainEqual(
      expect.objectContaining({
        msg: 'could not post an approval; the sweeper posts it',
        approvalId: result.approvalId,
        err: expect.objectContaining({ message: expect.stringMatching(/Connection is closed/) }),
      }),
    );
  });
});
