import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { App, LogLevel, verifySlackRequest } from '@slack/bolt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeSlackApi } from '../../src/devkit/fake-slack-api.js';
import {
  blockActionsPayload,
  interactionBody,
  postSigned,
  ResponseUrlServer,
  signSlackRequest,
  slashCommandBody,
  viewSubmissionPayload,
} from './slack-driver.js';

const SECRET = 'test-signing-secret';

describe('signSlackRequest', () => {
  it('is accepted by Bolt’s own verifySlackRequest', () => {
    expect(typeof verifySlackRequest).toBe('function');
    const body = slashCommandBody({ text: 'ls' });
    const timestamp = Math.floor(Date.now() / 1000);
    expect(() =>
      verifySlackRequest({
        signingSecret: SECRET,
        body,
        headers: {
          'x-slack-signature': signSlackRequest(SECRET, timestamp, body),
          'x-slack-request-timestamp': timestamp,
        },
      }),
    ).not.toThrow();
  });

  it('fails Bolt’s check with another secret, another body or a stale timestamp', () => {
    const body = slashCommandBody({ text: 'rm train-01' });
    const now = Math.floor(Date.now() / 1000);
    const verify =
      (signature: string, timestamp: number, raw = body) =>
      () =>
        verifySlackRequest({
          signingSecret: SECRET,
          body: raw,
          headers: { 'x-slack-signature': signature, 'x-slack-request-timestamp': timestamp },
        });
    expect(verify(signSlackRequest('other', now, body), now)).toThrow(/signature mismatch/);
    expect(verify(signSlackRequest(SECRET, now, body), now, `${body}x`)).toThrow(/signature mismatch/);
    expect(verify(signSlackRequest(SECRET, now - 600, body), now - 600)).toThrow(/stale/);
  });
});

describe('the driver against a real Bolt app and the fake Web API', () => {
  let fake: FakeSlackApi;
  let responses: ResponseUrlServer;
  let app: App;
  let eventsUrl: string;
  const seen: string[] = [];

  beforeEach(async () => {
    seen.length = 0;
    fake = await FakeSlackApi.start();
    responses = await ResponseUrlServer.start();
    app = new App({
      token: 'xoxb-test',
      signingSecret: SECRET,
      logLevel: LogLevel.ERROR,
      clientOptions: { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } },
    });
    app.command('/gpu', async ({ command, ack, respond, client, context }) => {
      await ack();
      const retry = context.retryNum === undefined ? '' : `:retry ${context.retryNum} ${context.retryReason}`;
      seen.push(`command:${command.text}:${command.user_id}:${command.channel_id}${retry}`);
      await respond({ response_type: 'ephemeral', text: `got ${command.text}` });
      await client.chat.postMessage({ channel: command.channel_id, text: `queued ${command.text}` });
    });
    app.action('approve', async ({ ack, body, respond }) => {
      await ack();
      const action = (body as { actions: Array<{ value: string }> }).actions[0];
      seen.push(`action:${action?.value}`);
      await respond({ replace_original: true, text: 'Approved' });
    });
    app.view('create_instance', async ({ ack, view }) => {
      const name = view.state.values.name?.value?.value ?? '';
      if (name === 'bad name') {
        await ack({ response_action: 'errors', errors: { name: 'A name has no spaces.' } });
        return;
      }
      seen.push(`view:${name}:${view.private_metadata}`);
      await ack();
    });
    const server = (await app.start({ port: 0, host: '127.0.0.1' })) as Server;
    eventsUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`;
  });

  afterEach(async () => {
    await app.stop();
    await responses.close();
    await fake.close();
  });

  it('delivers a signed slash command; the reply reaches the response_url and the channel', async () => {
    const responseUrl = responses.newUrl();
    const res = await postSigned(eventsUrl, slashCommandBody({ text: 'start train-01', responseUrl }), {
      secret: SECRET,
    });
    expect(res.status).toBe(200);
    const post = await responses.waitForPost((p) => p.id === responseUrl.split('/').at(-1));
    expect(post).toMatchObject({ responseType: 'ephemeral', body: { text: 'got start train-01' } });
    const message = await fake.waitFor('chat.postMessage');
    expect(message.body).toMatchObject({ channel: 'C0GPU', text: 'queued start train-01' });
    expect(seen).toEqual(['command:start train-01:U0ADA:C0GPU']);
    fake.assertNoViolations();
    expect(responses.violations).toEqual([]);
  });

  it('gets 401 from Bolt for a forged or stale request, and no handler runs', async () => {
    const body = slashCommandBody({ text: 'rm train-01' });
    expect((await postSigned(eventsUrl, body, { secret: SECRET, badSignature: true })).status).toBe(401);
    const stale = Math.floor(Date.now() / 1000) - 6 * 60;
    expect((await postSigned(eventsUrl, body, { secret: SECRET, timestamp: stale })).status).toBe(401);
    expect(seen).toEqual([]);
    expect(fake.callsTo('chat.postMessage')).toEqual([]);
  });

  it('delivers a button press whose handler replaces the original message', async () => {
    const responseUrl = responses.newUrl();
    const payload = blockActionsPayload({
      actionId: 'approve',
      value: 'job-42',
      text: 'Approve',
      message: { ts: '1700000000.000100', text: 'Approve?' },
      responseUrl,
    });
    const res = await postSigned(eventsUrl, interactionBody(payload), { secret: SECRET });
    expect(res.status).toBe(200);
    const post = await responses.waitForPost();
    expect(post).toMatchObject({ replaceOriginal: true, body: { text: 'Approved' } });
    expect(seen).toEqual(['action:job-42']);
  });

  it('delivers a view submission; field errors come back in the acknowledgement', async () => {
    const submit = (name: string) =>
      postSigned(
        eventsUrl,
        interactionBody(
          viewSubmissionPayload({
            callbackId: 'create_instance',
            privateMetadata: '{"channel":"C0GPU"}',
            values: { name: { value: { type: 'plain_text_input', value: name } } },
          }),
        ),
        { secret: SECRET },
      );
    const bad = await submit('bad name');
    expect(bad.status).toBe(200);
    expect(bad.json()).toEqual({ response_action: 'errors', errors: { name: 'A name has no spaces.' } });
    const good = await submit('train-01');
    expect(good.status).toBe(200);
    expect(seen).toEqual(['view:train-01:{"channel":"C0GPU"}']);
  });

  it('marks a redelivery with Slack’s retry headers, which Bolt passes to the listener', async () => {
    const res = await postSigned(
      eventsUrl,
      slashCommandBody({ text: 'ls', responseUrl: responses.newUrl() }),
      {
        secret: SECRET,
        retryNum: 1,
      },
    );
    expect(res.status).toBe(200);
    await fake.waitFor('chat.postMessage');
    expect(seen).toEqual(['command:ls:U0ADA:C0GPU:retry 1 http_timeout']);
  });
});

describe('ResponseUrlServer', () => {
  it('allows five posts per URL, as Slack does, and records the sixth as a violation', async () => {
    const server = await ResponseUrlServer.start();
    try {
      const url = server.newUrl();
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const res = await fetch(url, { method: 'POST', body: JSON.stringify({ text: `update ${i}` }) });
        statuses.push(res.status);
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200, 404]);
      expect(server.postsTo(url)).toHaveLength(5);
      expect(server.violations).toEqual([`response_url ${url.split('/').at(-1)} used more than 5 times`]);
    } finally {
      await server.close();
    }
  });
});
