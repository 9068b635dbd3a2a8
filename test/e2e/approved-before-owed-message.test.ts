import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedCall } from '../../src/devkit/fake-slack-api.js';
import { parsePolicy } from '../../src/policy/load-policy.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { buttonValue, click, messageWhen, primeCatalog, REQUEST_CHANNEL, until } from './guardrails-kit.js';

// The requester's "Waiting for approval" message met Slack's 429, so the sweeper posts it later
// (docs/reliability.md, "A card Slack would not take"); the approver decides while that post is on its
// way. The approved job then shows its progress in a message of its own, so the late "Waiting for
// approval" must not stay behind in the channel saying the request still waits, next to its Done.
// Found by the model test (docs/testing.md: Slack's 429 on the next chat.postMessage, an rm, Bob's Approve).

const APPROVALS = 'C0APPROVE';
const POLICY = parsePolicy(`
default_role: viewer
roles:
  operator: { users: [U0ADA, U0BOB] }
approvals:
  always: [rm]
  threshold_per_hour: 1000000
  unknown_price: allow
  approvers: { users: [U0BOB] }
  channel: ${APPROVALS}
  expires_after: 1h
`);

const waitingPosts = (stack: BotStack, name: string, since: number) =>
  stack.slack
    .callsTo('chat.postMessage')
    .filter(
      (c: RecordedCall) =>
        c.index >= since &&
        c.body.channel === REQUEST_CHANNEL &&
        String(c.body.text).startsWith('Waiting for approval') &&
        String(c.body.text).includes(`/gpu rm ${name}`),
    );

describe('an approval decided while the requester’s late message is on its way', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B', policy: POLICY });
    await primeCatalog(stack);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('leaves no "Waiting for approval" message behind once the job has answered', async () => {
    const made = await stack.cloud.createInstance({ name: 'late-1', type: 'h100-hgx-80gb.1x' });
    await until(
      async () => ((await stack.cloud.getInstance({ id: made.id })).state === 'running' ? true : undefined),
      'late-1 to run',
    );
    // Every post to the requests' channel within 3 s is answered 429: the listener's, then the sweeper's
    // first try, which then waits out Retry-After before it posts again.
    stack.slack.rateLimit('chat.postMessage', 3, 1, { channel: REQUEST_CHANNEL });
    const since = stack.slack.mark();
    const { answer } = await stack.command('rm late-1', { userId: 'U0ADA', channelId: REQUEST_CHANNEL });
    expect(String((await answer()).text)).toContain('needs an approval');
    const card = await until(
      () => stack.slack.messages(APPROVALS).find((m) => String(m.text).includes('/gpu rm late-1')),
      'the approval card',
    );
    await until(
      () => (waitingPosts(stack, 'late-1', since).length >= 2 ? true : undefined),
      "the sweeper's first try at the requester's message",
    );
    const approvalId = buttonValue(card, 'Approve');
    expect((await click(stack, { approvalId, cardChannel: APPROVALS, card }, 'U0BOB')).status).toBe(200);

    // The job's own message ends Done, and the machine is gone.
    const done = await until(
      () => stack.slack.messages(REQUEST_CHANNEL).find((m) => /^Done: \/gpu rm late-1/.test(String(m.text))),
      'the job to answer Done',
      30_000,
    );
    // The late post has landed (Slack took it), and then been taken back: no message in the channel
    // still says the request waits.
    await until(
      () =>
        waitingPosts(stack, 'late-1', since).some((c) => (c.response as { ok?: boolean }).ok === true)
          ? true
          : undefined,
      'the late post to land',
    );
    await messageWhen(stack, APPROVALS, card.ts, /^Approved by <@U0BOB>/);
    await until(
      () =>
        stack.slack
          .messages(REQUEST_CHANNEL)
          .filter((m) => m.ts !== done.ts && String(m.text).includes('/gpu rm late-1')).length === 0
          ? true
          : undefined,
      'no other message about the request in the channel',
      10_000,
    ).catch(() => {
      const left = stack.slack
        .messages(REQUEST_CHANNEL)
        .filter((m) => m.ts !== done.ts && String(m.text).includes('/gpu rm late-1'))
        .map((m) => String(m.text));
      throw new Error(`besides "${done.text}", the channel still shows: ${left.join(' | ')}`);
    });
  }, 60_000);
});
