import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePolicy } from '../../src/policy/load-policy.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { until } from '../support/until.js';
import { askForApproval, denyWithReason } from './guardrails-kit.js';

// Answers that must arrive although the way the request left is closed (docs/reliability.md): a job's
// private answer whose response_url Slack no longer takes goes by chat.postEphemeral, and where the bot
// cannot post either, by a direct message; so do an approver's Deny and an expiry. Signed slash
// commands and clicks, the real Slack SDK against the fake Slack, whose conversations say where the
// bot may post, and a response_url server that answers 404 expired_url as Slack does after 30 minutes.

const CHANNEL = 'C0GPU';
/** A private channel the bot was never invited to: Slack answers not_in_channel. */
const PRIVATE = 'C0PRIV';
const APPROVALS = 'C0APPR';
const ADA_DM = 'D0ADA';
/** People Slack knows (conversations.open opens a DM with a known user only). */
const USERS = [
  { id: 'U0ADA', name: 'ada', tz: 'UTC' },
  { id: 'U0BOB', name: 'bob', tz: 'UTC' },
];

const dmsTo = (stack: BotStack, pattern: RegExp) =>
  stack.slack.channelView(ADA_DM).filter((m) => pattern.test(String(m.text)));

describe('a job answer whose response_url has expired', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({
      shape: 'B',
      slack: { users: USERS, conversations: { [PRIVATE]: { kind: 'private' } } },
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('arrives as an ephemeral where it was asked', async () => {
    await stack.cloud.createInstance({ name: 'seen-1', type: 'h100-hgx-80gb.1x' });
    stack.responses.issueExpired(1);
    const since = stack.slack.mark();
    const { responseUrl, answer } = await stack.command('ls');
    expect(String((await answer()).text)).toMatch(/Looking that up/);
    const ephemeral = await stack.slack.waitFor(
      'chat.postEphemeral',
      (c) => c.body.channel === CHANNEL && c.body.user === 'U0ADA',
      15_000,
      since,
    );
    expect(ephemeral.response).toMatchObject({ ok: true });
    expect(JSON.stringify(ephemeral.body.blocks)).toContain('seen-1');
    // Tried once on the dead URL, then not again.
    expect(stack.responses.refused).toEqual([responseUrl.split('/').at(-1)]);
    expect(dmsTo(stack, /seen-1/)).toEqual([]);
  });

  it('arrives as a direct message where the bot cannot post either', async () => {
    stack.responses.issueExpired(1);
    const { answer } = await stack.command('ls', { channelId: PRIVATE });
    expect(String((await answer()).text)).toMatch(/Looking that up/);
    const dm = await until('the answer in a direct message', () => {
      const found = stack.slack.callsTo('chat.postMessage').find((c) => c.body.channel === ADA_DM);
      return found;
    });
    expect(dm.response).toMatchObject({ ok: true });
    expect(JSON.stringify(dm.body.blocks)).toContain('seen-1');
    // The ephemeral was tried and refused first; the DM conversation was opened as Slack wants.
    const refused = stack.slack.callsTo('chat.postEphemeral').find((c) => c.body.channel === PRIVATE);
    expect(refused?.response).toMatchObject({ ok: false, error: 'not_in_channel' });
    expect(stack.slack.callsTo('conversations.open').some((c) => c.body.users === 'U0ADA')).toBe(true);
  });
});

describe('approval notices where the bot cannot post', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({
      shape: 'B',
      slack: { users: USERS, conversations: { [PRIVATE]: { kind: 'private' } } },
      policy: parsePolicy(`
roles:
  operator: { users: [U0ADA] }
approvals:
  approvers: { users: [U0BOB] }
  channel: ${APPROVALS}
  expires_after: 1h
`),
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("tells the requester of a Deny by direct message when their channel's answers cannot reach them", async () => {
    await stack.cloud.createInstance({ name: 'doomed-1', type: 'rtx-a5000-24gb.1x' });
    stack.responses.issueExpired(1);
    const pending = await askForApproval(stack, 'rm doomed-1', {
      channelId: PRIVATE,
      approvalChannel: APPROVALS,
    });
    // The bot could not post "Waiting for approval" in the private channel: no message to edit.
    expect(stack.slack.channelView(PRIVATE)).toEqual([]);
    await denyWithReason(stack, pending, 'U0BOB', 'keep it for the demo');
    const told = await until('the requester to hear of the Deny', () => dmsTo(stack, /^Denied/)[0]);
    expect(String(told.text)).toContain('keep it for the demo');
    expect((await stack.cloud.listInstances()).some((i) => i.name === 'doomed-1')).toBe(true);
  });
});

describe('an expiry where the bot cannot post', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({
      shape: 'B',
      slack: { users: USERS, conversations: { [PRIVATE]: { kind: 'private' } } },
      policy: parsePolicy(`
roles:
  operator: { users: [U0ADA] }
approvals:
  approvers: { users: [U0BOB] }
  channel: ${APPROVALS}
  expires_after: 1s
`),
      approvalExpiryEveryMs: 200,
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('tells the requester by direct message', async () => {
    await stack.cloud.createInstance({ name: 'old-2', type: 'rtx-a5000-24gb.1x' });
    stack.responses.issueExpired(1);
    await askForApproval(stack, 'rm old-2', { channelId: PRIVATE, approvalChannel: APPROVALS });
    const told = await until('the requester to hear of the expiry', () => dmsTo(stack, /^Expired/)[0]);
    expect(String(told.text)).toContain('rm old-2');
  });
});
