import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BotStack, startBotStack } from '../support/bot-stack.js';

const CHANNEL = 'C0GPU';

// What a person sees when Slack itself gets in the way of a job's answer.
describe('Slack refusing a job’s answer', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B' });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('carries on in a new message when the request’s message was deleted', async () => {
    const since = stack.slack.mark();
    stack.slack.failWith('chat.update', 'message_not_found', 1);
    const { response } = await stack.command('create keep-going h100-hgx-80gb.1x');
    expect(response.status).toBe(200);
    await stack.slack.waitFor(
      'chat.update',
      (c) => String(c.body.text).startsWith('Done: /gpu create keep-going'),
      15_000,
      since,
    );
    const posts = stack.slack.callsTo('chat.postMessage').filter((c) => c.index >= since);
    // The listener's Queued message, then the job's own after the edit found it gone.
    expect(posts).toHaveLength(2);
    const done = stack.slack
      .channelView(CHANNEL)
      .filter((m) => String(m.text).startsWith('Done: /gpu create keep-going'));
    expect(done).toHaveLength(1);
    expect((await stack.cloud.listInstances()).filter((i) => i.name === 'keep-going')).toHaveLength(1);
  });

  it('creates the machine all the same, and answers privately, when Slack will never take the channel message', async () => {
    stack.slack.failWith('chat.update', 'not_in_channel', 100);
    stack.slack.failWith('chat.postMessage', 'not_in_channel', 100);
    const { response, responseUrl } = await stack.command('create nowhere h100-hgx-80gb.1x');
    expect(response.status).toBe(200);
    // A Slack failure after the cloud call never decides the job's outcome.
    const done = await stack.responses.waitForPost(
      (p) => responseUrl.endsWith(p.id) && String(p.body.text).includes('Done: /gpu create nowhere'),
      15_000,
    );
    expect(String(done.body.text)).toContain('invite @gpuops');
    expect((await stack.cloud.listInstances()).filter((i) => i.name === 'nowhere')).toHaveLength(1);
    expect(await stack.queue.getFailed()).toHaveLength(0);
  });
});
