import { LogLevel, WebClient } from '@slack/web-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeSlackApi } from '../../src/devkit/fake-slack-api.js';
import { createLogger } from '../../src/log/logger.js';
import { createReplyPort } from '../../src/slack/reply-port.js';

// The workers' reply port against the fake Slack (real HTTP, the real Web API client): each answer
// reaches the person once, by the first way that works, and a response_url Slack no longer takes is
// left for the next way.

const ADA = 'U0ADA';
const CHANNEL = 'C0GPU';
const PRIVATE = 'C0PRIV';
const answer = { text: 'train-1 is running.' };

describe('the reply port', () => {
  let slack: FakeSlackApi;
  let port: ReturnType<typeof createReplyPort>;
  beforeAll(async () => {
    slack = await FakeSlackApi.start({
      users: [{ id: ADA, name: 'ada' }],
      conversations: { [PRIVATE]: { kind: 'private' } },
    });
    const client = new WebClient('xoxb-test', {
      slackApiUrl: slack.apiUrl,
      logLevel: LogLevel.ERROR,
      retryConfig: { retries: 0 },
    });
    port = createReplyPort({ client, log: createLogger({ level: 'silent' }) });
  });
  afterAll(async () => {
    await slack?.close();
  });

  it('answers on the response_url while Slack takes answers there', async () => {
    const responseUrl = slack.responseUrl({ userId: ADA, channelId: CHANNEL });
    const route = await port.privately(
      { userId: ADA, channelId: CHANNEL, responseUrl, issuedAt: Date.now() },
      answer,
    );
    expect(route).toBe('response_url');
    expect(slack.ephemerals.at(-1)).toMatchObject({ user: ADA, channel: CHANNEL, text: answer.text });
  });

  it('answers by chat.postEphemeral once the response_url has expired', async () => {
    const responseUrl = slack.responseUrl({ userId: ADA, channelId: CHANNEL });
    slack.expireResponseUrl(responseUrl);
    const since = slack.mark();
    const route = await port.privately(
      { userId: ADA, channelId: CHANNEL, responseUrl, issuedAt: Date.now() },
      answer,
    );
    expect(route).toBe('ephemeral');
    expect(slack.callsTo('chat.postEphemeral').filter((c) => c.index >= since)).toHaveLength(1);
  });

  it('does not try a response_url 30 minutes old, and goes to a DM where the bot cannot post', async () => {
    const responseUrl = slack.responseUrl({ userId: ADA, channelId: PRIVATE });
    const since = slack.mark();
    const route = await port.privately(
      { userId: ADA, channelId: PRIVATE, responseUrl, issuedAt: Date.now() - 30 * 60_000 },
      answer,
    );
    expect(route).toBe('dm');
    const refused = slack.callsTo('chat.postEphemeral').filter((c) => c.index >= since);
    expect(refused.map((c) => c.response)).toEqual([{ ok: false, error: 'not_in_channel' }]);
    expect(slack.channelView('D0ADA').at(-1)?.text).toBe(answer.text);
    // The old URL was not used: it would have shown the answer in the private channel.
    expect(slack.ephemerals.filter((e) => e.channel === PRIVATE)).toEqual([]);
  });

  it('edits the message when it can, and answers privately when the bot cannot post there', async () => {
    const posted = await new WebClient('xoxb-test', { slackApiUrl: slack.apiUrl }).chat.postMessage({
      channel: CHANNEL,
      text: 'Waiting for approval',
    });
    const message = { channel: CHANNEL, ts: String(posted.ts) };
    expect(await port.show({ userId: ADA, channelId: CHANNEL }, { text: 'Denied by bob' }, message)).toBe(
      'edit',
    );
    expect(slack.message(CHANNEL, message.ts)?.text).toBe('Denied by bob');
    slack.failWith('chat.update', 'not_in_channel');
    expect(await port.show({ userId: ADA, channelId: CHANNEL }, { text: 'Expired' }, message)).toBe('dm');
    expect(slack.channelView('D0ADA').at(-1)?.text).toBe('Expired');
  });
});
