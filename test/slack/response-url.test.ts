import { WebClient } from '@slack/web-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeSlackApi } from '../../src/devkit/fake-slack-api.js';
import { tellPrivately } from '../../src/slack/response-url.js';

// How the listeners answer one person privately (src/slack/response-url.ts): through the request's
// response_url wherever it was typed, else an ephemeral in the conversation; a refused answer is
// logged, never thrown into the listener.

const TOKEN = 'xoxb-private';

describe('tellPrivately', () => {
  let slack: FakeSlackApi;
  const warnings: string[] = [];
  let deps: Parameters<typeof tellPrivately>[0];
  beforeAll(async () => {
    slack = await FakeSlackApi.start({
      tokens: [TOKEN],
      conversations: { G0SECRET: { kind: 'private', member: false } },
    });
    const client = new WebClient(TOKEN, { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 } });
    deps = { client, log: { warn: (_fields, msg) => warnings.push(msg) } };
  });
  afterAll(async () => {
    await slack.close();
  });

  it('answers through the response_url, even where the bot is not a member', async () => {
    const responseUrl = slack.responseUrl({ userId: 'U0ADA', channelId: 'G0SECRET' });
    const since = slack.mark();
    await tellPrivately(
      deps,
      { userId: 'U0ADA', channelId: 'G0SECRET', responseUrl },
      'Only you see this.',
      'x',
    );
    expect(slack.ephemerals.filter((e) => e.user === 'U0ADA').map((e) => [e.channel, e.text])).toEqual([
      ['G0SECRET', 'Only you see this.'],
    ]);
    // No Web API call: the response_url alone carried it.
    expect(slack.calls.slice(since)).toEqual([]);
  });

  it('falls back to an ephemeral in the conversation when there is no response_url', async () => {
    await tellPrivately(deps, { userId: 'U0BOB', channelId: 'C0GPU' }, 'Queued elsewhere.', 'x');
    expect(slack.callsTo('chat.postEphemeral').map((c) => c.body)).toMatchObject([
      { channel: 'C0GPU', user: 'U0BOB', text: 'Queued elsewhere.' },
    ]);
  });

  it('logs, and does not throw, when neither way reaches the person', async () => {
    const expired = `${slack.url}/response/R999999`;
    await expect(
      tellPrivately(deps, { userId: 'U0CAROL', responseUrl: expired }, 'Lost.', 'could not answer a button'),
    ).resolves.toBeUndefined();
    await expect(
      tellPrivately(deps, { userId: 'U0CAROL', channelId: 'G0SECRET' }, 'Lost.', 'could not answer a click'),
    ).resolves.toBeUndefined();
    expect(warnings).toEqual(['could not answer a button', 'could not answer a click']);
    expect(slack.ephemerals.filter((e) => e.user === 'U0CAROL')).toEqual([]);
  });
});
