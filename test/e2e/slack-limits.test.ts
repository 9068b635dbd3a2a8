import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePolicy } from '../../src/policy/load-policy.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { until } from '../support/until.js';
import { primeCatalog } from './guardrails-kit.js';

// Slack as it really answers (issue 15, points 1 and 2): rate limits per conversation, and
// conversations the bot cannot post to. The only timed assertion is Slack's own: an answer within 3 s.

const SLACK_ACK_MS = 3_000;
/** Runs every request at once, and gives every priced machine a stop time. */
const LEASING_POLICY = parsePolicy(`
default_role: admin
approvals:
  always: []
  unknown_price: allow
  threshold_per_hour: 1000000
  lease: { required_above_per_hour: 0, default: 1h, remind_before: 10m }
`);
const TYPE = 'h100-hgx-80gb.1x';

async function instanceNamed(stack: BotStack, name: string) {
  return (await stack.cloud.listInstances()).filter((i) => i.name === name);
}

describe('a 429 holds up only its own conversation', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B' });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('answers every command within 3 s while one channel is rate-limited, and none is lost', async () => {
    // The first post in the busy channel is answered 429 for 4 s: the SDK's default would pause every
    // call of the listener, and with it every acknowledgement.
    stack.slack.rateLimit('chat.postMessage', 4, 1, { channel: 'C0BUSY' });
    const busy = await stack.command(`create busy-1 ${TYPE}`, { channelId: 'C0BUSY' });
    const calm = await stack.command(`create calm-1 ${TYPE}`, { channelId: 'C0CALM' });
    expect(busy.response.status).toBe(200);
    expect(calm.response.status).toBe(200);
    expect(busy.response.elapsedMs).toBeLessThan(SLACK_ACK_MS);
    expect(calm.response.elapsedMs).toBeLessThan(SLACK_ACK_MS);
    // Both run, and each channel ends with its one message saying so.
    for (const [channel, name] of [
      ['C0CALM', 'calm-1'],
      ['C0BUSY', 'busy-1'],
    ] as const) {
      await stack.slack.waitFor(
        'chat.update',
        (c) => c.body.channel === channel && String(c.body.text).startsWith(`Done: /gpu create ${name}`),
        20_000,
      );
      expect(stack.slack.channelView(channel)).toHaveLength(1);
      expect(await instanceNamed(stack, name)).toHaveLength(1);
    }
  });

  it('lets a job in another channel finish while a channel waits out its limit', async () => {
    const since = stack.slack.mark();
    // The busy channel's job is answered 429 on its first edit, and the limit holds 8 s.
    stack.slack.rateLimit('chat.update', 8, 1, { channel: 'C0BUSY2' });
    await stack.command(`create busy-2 ${TYPE}`, { channelId: 'C0BUSY2' });
    await stack.slack.waitFor(
      'chat.update',
      (c) => c.body.channel === 'C0BUSY2' && c.status === 429,
      10_000,
      since,
    );
    await stack.command(`create calm-2 ${TYPE}`, { channelId: 'C0CALM2' });
    const calmDone = await stack.slack.waitFor(
      'chat.update',
      (c) => c.body.channel === 'C0CALM2' && String(c.body.text).startsWith('Done:'),
      20_000,
      since,
    );
    // The calm channel's answer did not wait behind the busy channel's limit.
    expect(stack.slack.isRateLimited('chat.update', 'C0BUSY2')).toBe(true);
    const busyDone = await stack.slack.waitFor(
      'chat.update',
      (c) => c.body.channel === 'C0BUSY2' && String(c.body.text).startsWith('Done:'),
      20_000,
      since,
    );
    expect(calmDone.response?.ok).toBe(true);
    expect(busyDone.response?.ok).toBe(true);
  });
});

describe.each([
  { kind: 'private', channel: 'G0SECRET', code: 'not_in_channel' },
  { kind: 'im', channel: 'D0PEOPLE', code: 'channel_not_found' },
  { kind: 'mpim', channel: 'C0MPDM', code: 'channel_not_found' },
] as const)('a request where the bot cannot post ($kind)', ({ kind, channel, code }) => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B', slack: { conversations: { [channel]: { kind } } } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('tells the requester at once what to do, runs the job, and answers them privately', async () => {
    const name = `hidden-${kind}`;
    const { response, responseUrl } = await stack.command(`create ${name} ${TYPE}`, { channelId: channel });
    expect(response.status).toBe(200);
    const told = await stack.responses.waitForPost(
      (p) => responseUrl.endsWith(p.id) && String(p.body.text).includes('invite @gpuops'),
    );
    expect(String(told.body.text)).toContain(code);
    const done = await stack.responses.waitForPost(
      (p) => responseUrl.endsWith(p.id) && String(p.body.text).includes(`Done: /gpu create ${name}`),
      20_000,
    );
    expect(done.responseType).toBe('ephemeral');
    expect(await instanceNamed(stack, name)).toHaveLength(1);
    expect((await stack.queue.getFailed()).length).toBe(0);
  });
});

describe('a channel archived while its job runs', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({
      shape: 'B',
      policy: LEASING_POLICY,
      slack: { conversations: { C0SOON: { kind: 'public' } } },
    });
    await primeCatalog(stack);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('still creates the machine, ends the job done, and answers the requester privately', async () => {
    const since = stack.slack.mark();
    const { responseUrl } = await stack.command(`create archived-1 ${TYPE}`, { channelId: 'C0SOON' });
    // Archived once the cloud is making the machine, while the job waits for it to run.
    await stack.slack.waitFor(
      'chat.update',
      (c) => c.body.channel === 'C0SOON' && String(c.body.text).startsWith('Waiting'),
      10_000,
      since,
    );
    stack.slack.setConversation('C0SOON', { kind: 'public', archived: true });
    const done = await stack.responses.waitForPost(
      (p) => responseUrl.endsWith(p.id) && String(p.body.text).includes('Done: /gpu create archived-1'),
      20_000,
    );
    expect(String(done.body.text)).toContain('archived');
    expect(await instanceNamed(stack, 'archived-1')).toHaveLength(1);
    expect((await stack.queue.getFailed()).length).toBe(0);
    // The machine got its stop time: a Slack failure after the cloud call never skips the lease.
    // The requester hears before BullMQ marks the job completed: wait for that.
    const job = await until('the create job to complete', async () =>
      (await stack.queue.getCompleted()).find((j) => j.name === 'create'),
    );
    expect(await stack.guardrails.leases.get(job.id!)).toBeDefined();
  });
});
