import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuCommand } from '../../src/commands/registry.js';
import type { JobContext } from '../../src/jobs/job-data.js';
import { acceptRequest } from '../../src/requests/accept-request.js';
import { MAKER_POST_CLAIM_MS, sweepUnposted } from '../../src/requests/post-approval.js';
import {
  DEFAULT_PROJECT,
  expectCleanSlack,
  type ListenerStack,
  policyOf,
  startListenerStack,
} from '../support/listener-stack.js';

// Who posts a new request's card (src/requests/post-approval.ts): the listener that made it, after its
// acknowledgement, holds the posting from the start, so a sweep running meanwhile never takes it and
// the requester is told what became of the card; once the maker's claim has run out (the listener was
// stopped before it posted), a sweep posts it, and a follow-up that comes later still posts nothing.

const APPROVALS = 'C0APPROVE';
const POLICY = policyOf(
  'approval-maker-claim.yaml',
  'default_role: operator',
  'approvals:',
  '  approvers: { users: [U0BOB] }',
  '  always: [rm]',
  `  channel: ${APPROVALS}`,
);

describe("a new request's card and message", () => {
  let stack: ListenerStack;
  let n = 0;
  beforeAll(async () => {
    stack = await startListenerStack(() => {}, { policy: POLICY });
    await stack.machines('mc-1', 'mc-2');
  });
  afterAll(async () => {
    expectCleanSlack(stack);
    await stack?.close();
  });

  const ctx = (): JobContext => ({
    teamId: 'T0FAKE',
    channelId: 'C0GPU',
    userId: 'U0ADA',
    projectId: DEFAULT_PROJECT,
    requestedAt: Date.now(),
  });
  const rm = (): GpuCommand => ({ kind: 'rm', instance: `mc-${++n}` }) as GpuCommand;
  /** The posts made for `instance` since `since`, by channel, with whether Slack took them. */
  const postsFor = (since: number, instance: string) =>
    stack.slack.calls
      .slice(since)
      .filter((call) => call.method === 'chat.postMessage' && JSON.stringify(call.body).includes(instance))
      .map((call) => `${call.body.channel} ${(call.response as { ok?: boolean }).ok ? 'ok' : 'refused'}`);

  it('are left to the listener that made the request: a sweep meanwhile posts nothing of it', async () => {
    stack.slack.rateLimit('chat.postMessage', 1, 1, { channel: APPROVALS });
    const since = stack.slack.mark();
    const command = rm();
    const result = await acceptRequest(stack.deps, command, ctx(), { deferPosts: true });
    if (result.status !== 'pending-approval')
      throw new Error(`expected pending-approval, got ${result.status}`);
    // The sweeper runs while the listener is still acknowledging Slack.
    await sweepUnposted(stack.deps);
    expect(postsFor(since, 'mc-1')).toEqual([]);
    // The listener then posts, meets the 429, and tells the requester why the card is not up yet.
    await expect(result.followUp!()).resolves.toMatch(
      /Slack asked gpuops to slow down, so its card will be posted/,
    );
    expect(postsFor(since, 'mc-1')).toEqual(['C0GPU ok', `${APPROVALS} refused`]);
    // The next sweep once Slack takes posts again puts the card up, once.
    await new Promise((r) => setTimeout(r, 1100));
    await sweepUnposted(stack.deps);
    await sweepUnposted(stack.deps);
    expect(postsFor(since, 'mc-1')).toEqual(['C0GPU ok', `${APPROVALS} refused`, `${APPROVALS} ok`]);
    expect((await stack.guardrails.approvals.get(result.approvalId))?.card).toBeDefined();
  });

  it('are posted by a sweep once the claim of a listener that never posted has run out, and only once', async () => {
    const made = Date.now();
    const since = stack.slack.mark();
    const result = await acceptRequest(stack.deps, rm(), ctx(), { deferPosts: true });
    if (result.status !== 'pending-approval')
      throw new Error(`expected pending-approval, got ${result.status}`);
    // The listener was stopped before its follow-up ran: a sweep inside its claim still leaves it...
    await sweepUnposted(stack.deps, made + MAKER_POST_CLAIM_MS - 1000);
    expect(postsFor(since, 'mc-2')).toEqual([]);
    // ...and one after it posts the message and the card.
    await sweepUnposted(stack.deps, made + MAKER_POST_CLAIM_MS + 1000);
    expect(postsFor(since, 'mc-2')).toEqual(['C0GPU ok', `${APPROVALS} ok`]);
    // A follow-up that still comes (a listener held up that long) finds the posting taken: no second card.
    await expect(result.followUp!()).resolves.toBeUndefined();
    expect(postsFor(since, 'mc-2')).toEqual(['C0GPU ok', `${APPROVALS} ok`]);
  });
});
