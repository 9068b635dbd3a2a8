import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePolicy } from '../../src/policy/load-policy.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import {
  buttonValue,
  click,
  messageWhen,
  primeCatalog,
  REQUEST_CHANNEL,
  stored,
  until,
} from './guardrails-kit.js';

// Slack answers 429 while a request that needs an approver is being shown (docs/reliability.md, "A card
// Slack would not take"): the listener never waits on a rate limit, so the card and the requester's
// message are posted later, off the acknowledgement path, exactly once, and the late card's buttons work.

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

const posts = (stack: BotStack, channel: string, prefix: string) =>
  stack.slack
    .callsTo('chat.postMessage')
    .filter(
      (c) =>
        c.body.channel === channel &&
        (c.response as { ok?: boolean } | undefined)?.ok === true &&
        String(c.body.text).startsWith(prefix),
    );

async function runningMachine(stack: BotStack, name: string): Promise<string> {
  const made = await stack.cloud.createInstance({ name, type: 'h100-hgx-80gb.1x' });
  await until(
    async () => ((await stack.cloud.getInstance({ id: made.id })).state === 'running' ? true : undefined),
    `${name} to run`,
  );
  return made.id;
}

describe('an approval card Slack rate-limited', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B', policy: POLICY });
    await primeCatalog(stack);
  });
  afterAll(async () => {
    await stack?.close();
  });

  /** Waits until a sweeper pass that started after now has finished. */
  async function aSweepLater(): Promise<void> {
    const since = Date.now();
    await until(async () => {
      const done = await stack.queue.getJobs(['completed']);
      return done.some((j) => j?.name === 'requests.sweep' && (j.processedOn ?? 0) > since)
        ? true
        : undefined;
    }, 'a sweeper pass');
  }

  /** Ada asks to remove `name`; the card and her message, whenever they come; Bob approves; it runs once. */
  async function rmThroughLateCard(name: string, noticeWanted: boolean): Promise<void> {
    const id = await runningMachine(stack, name);
    const sinceCall = stack.slack.mark();
    const { answer, responseUrl } = await stack.command(`rm ${name}`, {
      userId: 'U0ADA',
      channelId: REQUEST_CHANNEL,
    });
    expect(String((await answer()).text)).toContain('needs an approval');
    const ofThis = (channel: string, prefix: string) =>
      posts(stack, channel, prefix).filter((c) => c.index >= sinceCall && String(c.body.text).includes(name));
    const card = await until(
      () => ofThis(APPROVALS, 'Approval needed')[0],
      `the approval card of rm ${name}`,
    );
    const mine = await until(
      () => ofThis(REQUEST_CHANNEL, 'Waiting for approval')[0],
      `the requester's waiting message of rm ${name}`,
    );
    if (noticeWanted) {
      // Ada is told the truth: the card comes shortly; nothing for her to fix.
      const told = await until(
        () => stack.responses.postsTo(responseUrl).find((p) => String(p.body.text).includes('shortly')),
        'the requester told that the card comes shortly',
      );
      expect(String(told.body.text)).toContain(`<#${APPROVALS}>`);
      expect(String(told.body.text)).not.toContain('invite gpuops');
    }
    const cardTs = String((card.response as { ts: string }).ts);
    const mineTs = String((mine.response as { ts: string }).ts);
    const cardMessage = stack.slack.message(APPROVALS, cardTs)!;
    const approvalId = buttonValue(cardMessage, 'Approve');
    // Both are recorded with the request (the fake answers before the bot writes it down).
    await until(async () => {
      const request = await stored(stack, approvalId);
      return request.card?.ts === cardTs && request.requesterMessage?.ts === mineTs ? true : undefined;
    }, 'the card and the message recorded with the request');

    const clicked = await click(stack, { approvalId, cardChannel: APPROVALS, card: cardMessage }, 'U0BOB');
    expect(clicked.status).toBe(200);
    await messageWhen(stack, REQUEST_CHANNEL, mineTs, /^Done:/);
    await messageWhen(stack, APPROVALS, cardTs, /^Approved by <@U0BOB>/);
    await until(
      async () => ((await stack.cloud.listInstances()).some((i) => i.id === id) ? undefined : true),
      `${name} deleted`,
    );
    // Later sweeps post neither again.
    await aSweepLater();
    await aSweepLater();
    expect(ofThis(APPROVALS, 'Approval needed')).toHaveLength(1);
    expect(ofThis(REQUEST_CHANNEL, 'Waiting for approval')).toHaveLength(1);
  }

  it("posts both once Slack answered 429 to both (the model test's finding), and Approve runs it once", async () => {
    // The requester's message, then the card: both meet a 429.
    stack.slack.rateLimit('chat.postMessage', 3, 2);
    await rmThroughLateCard('late-1', true);
  });

  it('waits out a Retry-After of a few seconds on the approval channel, then posts the card once', async () => {
    stack.slack.rateLimit('chat.postMessage', 4, 1, { channel: APPROVALS });
    await rmThroughLateCard('late-2', true);
  });

  it("posts the requester's message later when only it met a 429", async () => {
    stack.slack.rateLimit('chat.postMessage', 3, 1, { channel: REQUEST_CHANNEL });
    await rmThroughLateCard('late-3', false);
  });

  it("leaves no message saying it still waits when Bob approves while the requester's message is owed", async () => {
    const id = await runningMachine(stack, 'late-4');
    const sinceCall = stack.slack.mark();
    // Ada's channel is rate-limited for a while: her "Waiting for approval" message is owed, and the
    // sweep that posts it waits out Retry-After; the card (another channel) goes up at once.
    stack.slack.rateLimit('chat.postMessage', 8, 1, { channel: REQUEST_CHANNEL });
    const { answer } = await stack.command('rm late-4', {
      userId: 'U0ADA',
      channelId: REQUEST_CHANNEL,
    });
    expect(String((await answer()).text)).toContain('needs an approval');
    const ofThis = (channel: string, prefix: string) =>
      posts(stack, channel, prefix).filter(
        (c) => c.index >= sinceCall && String(c.body.text).includes('late-4'),
      );
    const card = await until(() => ofThis(APPROVALS, 'Approval needed')[0], 'the approval card of rm late-4');
    const cardMessage = stack.slack.message(APPROVALS, String((card.response as { ts: string }).ts))!;
    const approvalId = buttonValue(cardMessage, 'Approve');
    // A sweep has claimed the owed message and is waiting for Slack (8 s); Bob approves meanwhile.
    // (Should the sweep post first on a very slow machine, what Ada sees must be the same.)
    const key = `${stack.storePrefix}:{approvals}:req:${approvalId}`;
    const postClaimed = async () => Number((await stack.redis.hget(key, 'postClaimedAt')) ?? 0);
    await until(
      async () => ((await postClaimed()) > 0 ? true : undefined),
      'a sweep to claim the owed message',
    );
    const clicked = await click(stack, { approvalId, cardChannel: APPROVALS, card: cardMessage }, 'U0BOB');
    expect(clicked.status).toBe(200);
    await until(
      async () => ((await stored(stack, approvalId)).state === 'approved' ? true : undefined),
      'the approval decided',
    );
    await until(
      async () => ((await stack.cloud.listInstances()).some((i) => i.id === id) ? undefined : true),
      'late-4 deleted',
    );
    // The sweep's post is over (its claim ended): what Ada's channel shows for the request now stays.
    await until(async () => ((await postClaimed()) === 0 ? true : undefined), "the sweep's post to end");
    const shown = () =>
      stack.slack
        .messages(REQUEST_CHANNEL)
        .filter((m) => String(m.text).includes('/gpu rm late-4'))
        .map((m) => String(m.text));
    // Ada reads the outcome in the channel, once, and nothing there says the request still waits.
    await until(() => (shown().some((t) => t.startsWith('Done:')) ? true : undefined), "Ada's final answer");
    expect(shown()).toEqual(['Done: /gpu rm late-4 — late-4 is deleted.']);
  });
});
