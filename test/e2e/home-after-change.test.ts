import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredView } from '../../src/devkit/fake-slack-api.js';
import { homeOf } from '../../src/devkit/slack/home-tabs.js';
import { pollProject } from '../../src/watch/poll-project.js';
import type { BotStack } from '../support/bot-stack.js';
import { startBotStack } from '../support/bot-stack.js';
import { openHome, published, textOf } from '../support/home-driver.js';
import { settled } from '../support/slash-requests.js';
import { listenerAnswer } from './answers.js';

// A Home opened after a request's final answer shows what that request did (docs/home.md), though the
// watcher's last look, or the listing another Home read moments before, still has the machine as it
// was: the job that stopped it stamps its project, and a look older than that stamp is not trusted.
// Found by the model-based test (docs/testing.md, "the Home tab shows a machine as a request left it").

const ADA = 'U0ADA';

async function openedHome(stack: BotStack): Promise<StoredView> {
  const since = stack.slack.mark();
  await openHome(stack, ADA);
  await published(stack, since, () => true, ADA);
  return homeOf(stack.slack, ADA)!;
}

describe('a Home opened after a stop in a watched project', () => {
  let stack: BotStack;
  beforeAll(async () => {
    // No scheduled looks: the watcher's last look stays the one taken before the stop.
    stack = await startBotStack({ shape: 'B', watch: { schedulers: false } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('shows the machine stopped, not as the watcher last saw it', async () => {
    expect(await listenerAnswer(stack, 'watch on')).toContain('now watches project');
    const signal = new AbortController().signal;
    await pollProject(stack.watch!.deps, stack.sim.info.projectId, signal);
    await settled(stack, 'create watched-1 h100-hgx-80gb.1x', 'Done');
    // The watcher looks after the create: its snapshot has the machine running.
    await pollProject(stack.watch!.deps, stack.sim.info.projectId, signal);
    expect(textOf(await openedHome(stack))).toContain('*watched-1* · *running*');

    await settled(stack, 'stop watched-1', 'Done');
    const home = textOf(await openedHome(stack));
    expect(home).toContain('*watched-1* · *stopped*');
    expect(home).toContain('1 made through gpuops, 0 running');
  });
});

describe('a Home opened after a stop in a project no channel watches', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B' });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('shows the machine stopped, not as the listing shared a moment before had it', async () => {
    await settled(stack, 'create lone-2 h100-hgx-80gb.1x', 'Done');
    // This Home's listing is shared with every Home opened in the next 15 s.
    expect(textOf(await openedHome(stack))).toContain('*lone-2* · *running*');

    await settled(stack, 'stop lone-2', 'Done');
    const home = textOf(await openedHome(stack));
    expect(home).toContain('*lone-2* · *stopped*');
    expect(home).toContain('1 made through gpuops, 0 running');
  });
});
