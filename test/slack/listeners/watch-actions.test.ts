import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WAITLIST_CREATE_ACTION } from '../../../src/commands/waitlist/render.js';
import { IDLE_ACTIONS, idleAlertMessage, KEEP_SECONDS } from '../../../src/render/idle-alert.js';
import { REDIS_DOWN } from '../../../src/slack/listeners/gpu-command.js';
import { registerWatchActions } from '../../../src/slack/listeners/watch-actions.js';
import { createIdleState } from '../../../src/store/idle-state.js';
import {
  DEFAULT_PROJECT,
  expectCleanSlack,
  type ListenerStack,
  policyOf,
  startListenerStack,
  withRedisGone,
} from '../../support/listener-stack.js';

// The watchers' buttons (src/slack/listeners/watch-actions.ts) alone: Stop, Keep and Snooze on an
// idle-GPU alert, Create on a waitlist notice. Ada operates; Carol may only look.

const POLICY = policyOf('watch.yaml', 'default_role: viewer', 'roles:', '  operator: { users: [U0ADA] }');
const CHANNEL = 'C0WATCH';

describe('the idle alert and waitlist buttons', () => {
  let stack: ListenerStack;
  beforeAll(async () => {
    stack = await startListenerStack(registerWatchActions, { policy: POLICY });
    await stack.machines('idle-1', 'idle-2', 'idle-3');
  });
  afterAll(async () => {
    expectCleanSlack(stack);
    await stack?.close();
  });

  /** The alert the idle watcher posts for machine `n` (its id as the catalogue knows it). */
  async function alert(n: number): Promise<{ ts: string; value: string; blocks: unknown[]; text: string }> {
    const message = idleAlertMessage({
      instanceId: `i-${n - 1}-idle-${n}`,
      projectId: DEFAULT_PROJECT,
      name: `idle-${n}`,
      type: 'h100-hgx-80gb.8x',
      since: Date.now() - 3 * 3_600_000,
      now: Date.now(),
      thresholdPercent: 5,
      maxUtil: 0.4,
      cost: { known: false, reason: 'no price in this test' },
      ownerId: 'U0ADA',
      chart: false,
    });
    const posted = await stack.deps.client.chat.postMessage({ channel: CHANNEL, ...message });
    const actions = message.blocks.at(-1) as { elements: Array<{ value: string }> };
    return {
      ts: String(posted.ts),
      value: actions.elements[0]!.value,
      blocks: message.blocks,
      text: message.text,
    };
  }

  const pressOn = (
    action: string,
    shown: { ts: string; value: string; blocks: unknown[]; text: string },
    userId: string,
  ) =>
    stack.press(action, shown.value, {
      userId,
      channelId: CHANNEL,
      ts: shown.ts,
      blocks: shown.blocks,
      text: shown.text,
    });

  const buttonsOf = (ts: string) =>
    JSON.stringify(stack.slack.message(CHANNEL, ts)?.blocks).includes('gpuops.idle.');

  it('Stop queues one stop of that machine however often it is pressed, and the alert says who asked', async () => {
    const shown = await alert(1);
    await Promise.all([
      pressOn(IDLE_ACTIONS.stop, shown, 'U0ADA'),
      pressOn(IDLE_ACTIONS.stop, shown, 'U0ADA'),
    ]);
    const jobs = await stack.jobs();
    expect(jobs).toHaveLength(1);
    expect(jobs[0]!.data.command).toEqual({ kind: 'stop', instance: 'i-0-idle-1' });
    expect(jobs[0]!.data.ctx).toMatchObject({
      userId: 'U0ADA',
      channelId: CHANNEL,
      projectId: DEFAULT_PROJECT,
    });
    expect(buttonsOf(shown.ts)).toBe(false);
    expect(JSON.stringify(stack.slack.message(CHANNEL, shown.ts)?.blocks)).toContain(
      `<@U0ADA> asked to stop it`,
    );
    expect(await createIdleState(stack.store).answered('i-0-idle-1')).toBe('U0ADA');
  });

  it('refuses Stop, Keep and Snooze to a viewer, privately: no job, no suppression, the alert untouched', async () => {
    const shown = await alert(2);
    for (const action of [IDLE_ACTIONS.stop, IDLE_ACTIONS.keep, IDLE_ACTIONS.snooze]) {
      await pressOn(action, shown, 'U0CAROL');
    }
    const told = stack.ephemeralsTo('U0CAROL');
    expect(told).toHaveLength(3);
    for (const refusal of told)
      expect(refusal).toMatch(/needs the \*operator\* role, and you have \*viewer\*/);
    expect((await stack.jobs()).filter((j) => j.data.ctx.userId === 'U0CAROL')).toEqual([]);
    expect(await createIdleState(stack.store).suppression('i-1-idle-2')).toBeUndefined();
    expect(stack.slack.message(CHANNEL, shown.ts)?.history).toHaveLength(1);
  });

  it('Keep quiets the machine for two hours and says until when on the alert', async () => {
    const shown = await alert(3);
    const before = Date.now();
    await pressOn(IDLE_ACTIONS.keep, shown, 'U0ADA');
    const quiet = await createIdleState(stack.store).suppression('i-2-idle-3');
    expect(quiet).toMatchObject({ by: 'U0ADA', reason: 'keep' });
    expect(quiet!.until).toBeGreaterThanOrEqual(before + KEEP_SECONDS * 1000);
    expect(buttonsOf(shown.ts)).toBe(false);
    expect(JSON.stringify(stack.slack.message(CHANNEL, shown.ts)?.blocks)).toContain(
      '<@U0ADA> keeps it for 2 hours: no idle alert or automatic stop until',
    );
    expect((await stack.jobs()).map((j) => j.data.command.instance)).not.toContain('i-2-idle-3');
  });

  it('does nothing for a button whose value it did not make', async () => {
    const before = (await stack.jobs()).length;
    const since = stack.slack.mark();
    for (const value of ['not json', '{"i":"x"}', '']) {
      await stack.press(IDLE_ACTIONS.stop, value, { channelId: CHANNEL });
      await stack.press(WAITLIST_CREATE_ACTION, value, { channelId: CHANNEL });
    }
    expect(await stack.jobs()).toHaveLength(before);
    expect(stack.slack.calls.slice(since)).toEqual([]);
  });

  it('Create on a waitlist notice opens the create form with the type filled in, for those who may create', async () => {
    const since = stack.slack.mark();
    const value = JSON.stringify({ t: 'h100-hgx-80gb.8x', c: 1 });
    await stack.press(WAITLIST_CREATE_ACTION, value, { channelId: CHANNEL, userId: 'U0ADA' });
    const opened = await stack.slack.waitFor('views.open', () => true, 5_000, since);
    expect(JSON.stringify(opened.body.view)).toContain('h100-hgx-80gb.8x');

    const mark = stack.slack.mark();
    await stack.press(WAITLIST_CREATE_ACTION, value, { channelId: CHANNEL, userId: 'U0CAROL' });
    expect(stack.slack.calls.slice(mark).filter((c) => c.method === 'views.open')).toEqual([]);
    expect(stack.ephemeralsTo('U0CAROL').at(-1)).toMatch(/^`\/gpu create` needs the \*operator\* role/);
  });
});

describe('the idle alert buttons, Redis gone', () => {
  it('tells the presser nothing was started, and leaves the alert as it was', async () => {
    await withRedisGone(registerWatchActions, { policy: POLICY }, async (stack) => {
      const value = JSON.stringify({ i: 'i-0-idle-1', p: DEFAULT_PROJECT, n: 'idle-1' });
      for (const action of [IDLE_ACTIONS.stop, IDLE_ACTIONS.keep]) {
        await stack.press(action, value, { userId: 'U0ADA', channelId: CHANNEL });
      }
      expect(stack.ephemeralsTo('U0ADA')).toEqual([REDIS_DOWN, REDIS_DOWN]);
      expect(stack.slack.callsTo('chat.update')).toEqual([]);
    });
  });
});
