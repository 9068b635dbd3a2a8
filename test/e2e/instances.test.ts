import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BotStack, SIGNING_SECRET, startBotStack } from '../support/bot-stack.js';
import { postSigned, slashCommandBody } from '../support/slack-driver.js';

const CHANNEL = 'C0GPU';

/** The text of the channel message a request produced, once it shows `phase`. */
async function finalMessage(stack: BotStack, ts: string, phase: 'Done' | 'Failed', timeoutMs = 15_000) {
  await stack.slack.waitFor(
    'chat.update',
    (c) => c.body.ts === ts && String(c.body.text).startsWith(`${phase}:`),
    timeoutMs,
  );
  return stack.slack.message(CHANNEL, ts)!;
}

async function channelRequest(stack: BotStack, text: string) {
  const since = stack.slack.mark();
  const { response } = await stack.command(text);
  expect(response.status).toBe(200);
  const posted = await stack.slack.waitFor('chat.postMessage', () => true, 5_000, since);
  return String((posted.response as { ts: string }).ts);
}

// With the simulator's clock held, the machine stays "creating" until the test moves it: the message
// must say it is waiting, whatever the machine's load (on the real clock a busy worker may first look
// after the machine is already running, and then rightly never shows the wait).
describe('a create waiting for its machine', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B', simClock: 'manual', transitionMs: 1_000 });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('shows "Waiting" in place while the machine is being made, then the running machine', async () => {
    const ts = await channelRequest(stack, 'create wait-1 h100-hgx-80gb.1x');
    await stack.slack.waitFor(
      'chat.update',
      (c) =>
        c.body.ts === ts &&
        /^Waiting: .*Waiting for wait-1 to be running \(state: creating\)/.test(String(c.body.text)),
      15_000,
    );
    expect(await stack.cloud.listInstances()).toContainEqual(
      expect.objectContaining({ name: 'wait-1', state: 'creating' }),
    );
    await stack.sim.clock.advance(1_000);
    const message = await finalMessage(stack, ts, 'Done');
    expect(message.text).toMatch(/wait-1 is running at \d+\.\d+\.\d+\.\d+/);
  });
});

describe.each(['A', 'B', 'C'] as const)('instances end to end, shape %s', (shape) => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('creates a machine, shows it in place from queued to running with its IP', async () => {
    const ts = await channelRequest(stack, 'create train-1 h100-hgx-80gb.1x --tag team=ml');
    const message = await finalMessage(stack, ts, 'Done');
    const phases = message.history.map((v) => String(v.text).split(':')[0]);
    expect(phases[0]).toBe('Queued');
    expect(phases).toContain('Working');
    expect(message.text).toMatch(/train-1 is running at \d+\.\d+\.\d+\.\d+/);
    expect(JSON.stringify(message.blocks)).toContain('requested by <@U0ADA>');
    const instances = await stack.cloud.listInstances();
    expect(instances.filter((i) => i.name === 'train-1')).toHaveLength(1);
    // And how to reach it: the ssh command, as the default login user of the policy (test/e2e/login.test.ts).
    const ip = instances.find((i) => i.name === 'train-1')?.ip;
    expect(JSON.stringify(message.blocks)).toContain(`Log in: \`ssh ubuntu@${ip}\``);
    expect(stack.slack.violations).toEqual([]);
  });

  it('lists instances privately, in place of the "looking" note', async () => {
    const { responseUrl, answer } = await stack.command('ls');
    expect((await answer()).text).toMatch(/Looking that up/);
    expect((await answer()).response_type).toBe('ephemeral');
    const post = await stack.responses.waitForPost((p) => responseUrl.endsWith(p.id));
    expect(post.replaceOriginal).toBe(true);
    expect(post.responseType).toBe('ephemeral');
    expect(JSON.stringify(post.body.blocks)).toContain('*train-1* · h100-hgx-80gb.1x · running');
  });

  it('stops and starts by name, waiting for each state', async () => {
    const stopTs = await channelRequest(stack, 'stop train-1');
    expect((await finalMessage(stack, stopTs, 'Done')).text).toContain('train-1 is stopped');
    const startTs = await channelRequest(stack, 'start train-1');
    expect((await finalMessage(stack, startTs, 'Done')).text).toMatch(/train-1 is running at/);
  });

  it('tells only the requester when an instance does not exist, with the nearest name; the channel sees nothing', async () => {
    const since = stack.slack.mark();
    const jobsBefore = (await stack.store.recentJobs(CHANNEL, 50)).length;
    const answer = async (text: string) => {
      const body = await (await stack.command(text)).answer();
      expect(body.response_type).toBe('ephemeral');
      return String(body.text);
    };
    expect(await answer('stop nosuch-machine')).toBe(
      'No instance "nosuch-machine" in this project. This project has: train-1. Check the name with `/gpu ls`.',
    );
    expect(await answer('start trian-1')).toBe(
      'No instance "trian-1" in this project. Did you mean `train-1`? (`/gpu ls` lists them.)',
    );
    // Nothing was posted to the channel and no job was queued for either.
    expect(stack.slack.calls.slice(since).filter((c) => c.method === 'chat.postMessage')).toEqual([]);
    expect((await stack.store.recentJobs(CHANNEL, 50)).length).toBe(jobsBefore);
  });

  it('deletes a machine and waits until it is gone', async () => {
    const ts = await channelRequest(stack, 'rm train-1');
    expect((await finalMessage(stack, ts, 'Done')).text).toContain('train-1 is deleted');
    expect((await stack.cloud.listInstances()).some((i) => i.name === 'train-1')).toBe(false);
  });
});

describe('requests that must not become jobs', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B' });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('answers a typo with the usage, an example and the nearest subcommand, and queues nothing', async () => {
    const body = await (await stack.command('strat train-1')).answer();
    expect(body.response_type).toBe('ephemeral');
    expect(body.text).toContain('/gpu start');
    expect(await stack.requestsQueued()).toBe(0);
  });

  it('refuses a forged or stale signature with 401 and queues nothing', async () => {
    const body = slashCommandBody({ text: 'create evil h100-hgx-80gb.8x' });
    const forged = await postSigned(stack.url, body, { secret: SIGNING_SECRET, badSignature: true });
    expect(forged.status).toBe(401);
    const stale = await postSigned(stack.url, body, {
      secret: SIGNING_SECRET,
      timestamp: Math.floor(Date.now() / 1000) - 600,
    });
    expect(stale.status).toBe(401);
    expect(await stack.requestsQueued()).toBe(0);
    expect(stack.slack.callsTo('chat.postMessage')).toHaveLength(0);
  });

  it('makes one job of a double submission', async () => {
    const [first, second] = await Promise.all([
      stack.command('create twin h100-hgx-80gb.1x'),
      stack.command('create twin h100-hgx-80gb.1x'),
    ]);
    expect([first.response.status, second.response.status]).toEqual([200, 200]);
    const answers = [first.response.text, second.response.text].join(' ');
    expect(answers).toContain('Already on it');
    await stack.slack.waitFor(
      'chat.update',
      (c) => String(c.body.text).startsWith('Done: /gpu create twin'),
      15_000,
    );
    await stack.drained();
    expect((await stack.cloud.listInstances()).filter((i) => i.name === 'twin')).toHaveLength(1);
    expect(stack.sim.control.createCount('createInstance', 'twin')).toBe(1);
    expect(stack.slack.callsTo('chat.postMessage')).toHaveLength(1);
  });
});
