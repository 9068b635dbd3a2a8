import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredView } from '../../src/devkit/fake-slack-api.js';
import { homeOf } from '../../src/devkit/slack/home-tabs.js';
import { recordInstanceOwner } from '../../src/store/instance-owners.js';
import { cacheKey } from '../../src/store/store.js';
import { pollProject } from '../../src/watch/poll-project.js';
import type { BotStack } from '../support/bot-stack.js';
import { startBotStack } from '../support/bot-stack.js';
import { blocksOf, openHome, published, textOf } from '../support/home-driver.js';
import { settled } from '../support/slash-requests.js';
import { until } from '../support/until.js';
import { CHANNEL, listenerAnswer } from './answers.js';

// "Your machines" from what gpuops knows (docs/home.md): the create job's record of the machine, the
// watcher's looks only when they are newer than that record, and for a project no channel watches a
// listing read from the cloud as the Home opens, or "state unknown", never "0 running" with both
// buttons. Signed app_home_opened events, the fake Slack's views.publish, the simulator over HTTP.

const ADA = 'U0ADA';

/** The labels of the buttons under the machine named `name`. */
function buttonsOf(view: StoredView | undefined, name: string): string[] {
  const blocks = blocksOf(view);
  const at = blocks.findIndex((b) => b.type === 'section' && String(b.text?.text).startsWith(`*${name}*`));
  expect(at, `a section for ${name} in ${textOf(view).slice(0, 400)}`).toBeGreaterThan(-1);
  return (blocks[at + 1]!.elements ?? []).map((e) => (e.text as { text: string }).text);
}

async function openedHome(stack: BotStack): Promise<StoredView> {
  const since = stack.slack.mark();
  await openHome(stack, ADA);
  await published(stack, since, () => true, ADA);
  return homeOf(stack.slack, ADA)!;
}

describe('the Home tab of a watched project', () => {
  let stack: BotStack;
  beforeAll(async () => {
    // No scheduled looks: the test decides when the watcher looks.
    stack = await startBotStack({ shape: 'B', watch: { schedulers: false } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('lists a machine made after the watcher last looked, and keeps listing it', async () => {
    expect(await listenerAnswer(stack, 'watch on')).toContain('now watches project');
    const signal = new AbortController().signal;
    expect((await pollProject(stack.watch!.deps, stack.sim.info.projectId, signal)).status).toBe('baseline');
    // The watcher's last look predates this machine: it is no proof that the machine is gone.
    await settled(stack, 'create fresh-1 h100-hgx-80gb.1x', 'Done');
    const home = await openedHome(stack);
    expect(textOf(home)).toContain('*fresh-1* · *running*');
    expect(textOf(home)).not.toContain('None made through gpuops yet');
    expect(buttonsOf(home, 'fresh-1')).toEqual(['Stop', 'Metrics']);
    // Opened again: the record was kept (before, the first opening forgot it).
    expect(textOf(await openedHome(stack))).toContain('*fresh-1* · *running*');

    // A look after the machine was deleted does drop it.
    const id = (await stack.cloud.listInstances()).find((i) => i.name === 'fresh-1')!.id;
    await stack.cloud.deleteInstance({ id });
    await until('the machine to be gone from the cloud', async () =>
      (await stack.cloud.listInstances()).some((i) => i.id === id) ? undefined : true,
    );
    await pollProject(stack.watch!.deps, stack.sim.info.projectId, signal);
    expect(textOf(await openedHome(stack))).toContain('None made through gpuops yet');
  });
});

describe('the Home tab of a project no channel watches', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B' });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("reads the machines' state from the cloud as the Home opens", async () => {
    await settled(stack, 'create lone-1 h100-hgx-80gb.1x', 'Done');
    await settled(stack, 'stop lone-1', 'Done');
    const home = await openedHome(stack);
    // The create job recorded it running; the cloud, read now, says stopped.
    expect(textOf(home)).toContain('*lone-1* · *stopped*');
    expect(textOf(home)).toContain('1 made through gpuops, 0 running');
    expect(buttonsOf(home, 'lone-1')).toEqual(['Start', 'Metrics']);
  });

  it('shows "state unknown" with neither Start nor Stop when the cloud does not answer', async () => {
    // A machine recorded as older versions did (no type or state), and a cloud that fails meanwhile.
    const made = await stack.cloud.createInstance({ name: 'old-1', type: 'h100-hgx-80gb.1x' });
    await recordInstanceOwner(stack.store, made.id, ADA, {
      name: 'old-1',
      channelId: CHANNEL,
      projectId: stack.sim.info.projectId,
    });
    await stack.redis.del(cacheKey(stack.storePrefix, `home-machines:${stack.sim.info.projectId}`));
    stack.sim.control.addFault({ operation: 'listInstances', status: 503 });
    try {
      const home = await openedHome(stack);
      const text = textOf(home);
      expect(text).toContain('*old-1* · _state unknown');
      expect(text).not.toContain('0 running');
      expect(buttonsOf(home, 'old-1')).toEqual(['Metrics']);
      expect(buttonsOf(home, 'lone-1')).toEqual(['Metrics']);
    } finally {
      stack.sim.control.clearFaults();
    }
  });
});

describe('the Home tab when the listener runs apart from the workers', () => {
  let stack: BotStack;
  beforeAll(async () => {
    // `gpuops web` (no cloud client) and one `gpuops worker`, on one Redis.
    stack = await startBotStack({ shape: 'B', workers: 0, watch: { replicas: 2, schedulers: false } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('has a worker publish it again with the state read from the cloud', async () => {
    await settled(stack, 'create apart-1 h100-hgx-80gb.1x', 'Done');
    const since = stack.slack.mark();
    await openHome(stack, ADA);
    // The listener cannot read the cloud: it says so at once, and a worker follows with the state.
    const first = await published(stack, since, () => true, ADA);
    expect(JSON.stringify(first.body.view)).toContain('*apart-1* · _state unknown');
    const second = await published(stack, since, (t) => t.includes('*apart-1* · *running*'), ADA);
    expect(JSON.stringify(second.body.view)).toContain('1 made through gpuops, 1 running');
  });
});
