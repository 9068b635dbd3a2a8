import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { homeOf } from '../../src/devkit/slack/home-tabs.js';
import { type BotStack, SIGNING_SECRET, startBotStack } from '../support/bot-stack.js';
import { until } from '../support/gpuops-process.js';
import { blocksOf, openHome, published } from '../support/home-driver.js';
import {
  blockActionsPayload,
  interactionBody,
  postSigned,
  randomTriggerId,
  slashCommandBody,
} from '../support/slack-driver.js';
import { settled } from '../support/slash-requests.js';

// A signed request is accepted for five minutes after its timestamp. Whoever captures one (a proxy
// log, a leaked HAR file) can send it again within that time; it must not start anything twice.

const CHANNEL = 'C0REPLAY';

describe('a replayed /gpu command', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B' });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('makes one machine of a signed create sent again after the 30 s dedupe but within five minutes', async () => {
    const body = slashCommandBody({
      text: 'create replay-1 rtx-a5000-24gb.1x',
      channelId: CHANNEL,
      triggerId: randomTriggerId(),
    });
    const timestamp = Math.floor(Date.now() / 1000);
    const first = await postSigned(stack.url, body, { secret: SIGNING_SECRET, timestamp });
    expect(first.status).toBe(200);
    await until(
      async () =>
        (await stack.cloud.listInstances()).find((i) => i.name === 'replay-1' && i.state === 'running'),
      'replay-1 to run',
      20_000,
    );
    // Half a minute later the same-request dedupe has expired: forget it instead of waiting.
    for (const key of await stack.redis.keys(`${stack.storePrefix}:dedupe:*`)) await stack.redis.del(key);

    const replay = await postSigned(stack.url, body, { secret: SIGNING_SECRET, timestamp });
    expect(replay.status).toBe(200);
    await stack.drained();
    expect(stack.sim.control.createCount('createInstance', 'replay-1')).toBe(1);
    expect((await stack.cloud.listInstances()).filter((i) => i.name === 'replay-1')).toHaveLength(1);
    expect(await stack.store.recentJobs(CHANNEL, 10)).toHaveLength(1);
    expect(replay.text).toContain('Slack already delivered this exact command');
  });

  it('still runs the same command typed again: a new trigger', async () => {
    const before = (await stack.store.recentJobs(CHANNEL, 10)).length;
    const { response } = await stack.command('create replay-2 rtx-a5000-24gb.1x', { channelId: CHANNEL });
    expect(response.text).not.toContain('already delivered');
    for (const key of await stack.redis.keys(`${stack.storePrefix}:dedupe:*`)) await stack.redis.del(key);
    const again = await stack.command('create replay-2 rtx-a5000-24gb.1x', { channelId: CHANNEL });
    expect(again.response.text).not.toContain('already delivered');
    await stack.drained();
    expect((await stack.store.recentJobs(CHANNEL, 10)).length - before).toBe(2);
  });
});

// The same holds for a button: a captured signed block_actions body, sent again after the listeners'
// own 30 s dedupe has expired and before Bolt's five minutes are up, must not act a second time.
describe('a replayed button press', () => {
  const ADA = 'U0ADA';
  const HOME_CHANNEL = 'C0GPU';
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B', watch: { pollEveryMs: 150 } });
    await settled(stack, 'watch on', 'Done').catch(() => undefined);
  }, 30_000);
  afterAll(async () => {
    await stack?.close();
  });

  it("stops a machine once for a Home tab Stop press sent twice, the second time after the dedupe's 30 s", async () => {
    await settled(stack, 'create replay-home-1 rtx-a5000-24gb.1x', 'Done');
    const home = await until(
      async () => {
        const since = stack.slack.mark();
        await openHome(stack);
        const call = await published(stack, since, () => true);
        return JSON.stringify(call.body.view).includes('replay-home-1* · *running*')
          ? homeOf(stack.slack, ADA)
          : undefined;
      },
      'the Home tab to show replay-home-1 running',
      20_000,
    );
    const stop = blocksOf(home)
      .flatMap((b) => b.elements ?? [])
      .find((e) => (e.text as { text?: string } | undefined)?.text === 'Stop')!;
    const body = interactionBody(
      blockActionsPayload({
        actionId: String(stop.action_id),
        value: String(stop.value),
        userId: ADA,
        view: { ...home.view, id: home.id, hash: home.hash, type: 'home' },
      }),
    );
    const timestamp = Math.floor(Date.now() / 1000);
    const jobs = async () =>
      (await stack.store.recentJobs(HOME_CHANNEL, 20)).filter((j) => j.kind === 'stop');

    expect((await postSigned(stack.url, body, { secret: SIGNING_SECRET, timestamp })).status).toBe(200);
    await until(async () => ((await jobs()).length === 1 ? true : undefined), 'the stop job', 10_000);
    await stack.drained();
    // Half a minute later the same-request dedupe has expired: forget it instead of waiting.
    for (const key of await stack.redis.keys(`${stack.storePrefix}:dedupe:*`)) await stack.redis.del(key);

    const replay = await postSigned(stack.url, body, { secret: SIGNING_SECRET, timestamp });
    expect(replay.status).toBe(200);
    await stack.drained();
    expect(await jobs()).toHaveLength(1);
  }, 60_000);
});
