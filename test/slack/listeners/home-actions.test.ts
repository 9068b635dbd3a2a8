import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HomeRun, homeActionId, homeButtonValue } from '../../../src/commands/home/home-buttons.js';
import { REDIS_DOWN } from '../../../src/slack/listeners/gpu-command.js';
import { registerHomeActions } from '../../../src/slack/listeners/home-actions.js';
import { homeOpenedBy } from '../../../src/store/home-state.js';
import {
  expectCleanSlack,
  type ListenerStack,
  policyOf,
  startListenerStack,
  withRedisGone,
} from '../../support/listener-stack.js';
import { blockActionsPayload } from '../../support/slack-driver.js';

// The Home tab (src/slack/listeners/home-actions.ts) alone: published when opened, and its buttons run
// the command they carry as if typed in their channel, the outcome shown on top of the re-published
// Home. Ada operates; Carol may only look.

const POLICY = policyOf(
  'home.yaml',
  'default_role: viewer',
  'roles:',
  '  operator: { users: [U0ADA] }',
  'approvals:',
  '  threshold_per_hour: 100',
);

describe('the Home tab listener', () => {
  let stack: ListenerStack;
  beforeAll(async () => {
    stack = await startListenerStack(registerHomeActions, { policy: POLICY });
    await stack.machines('train-01', 'train-02');
  });
  afterAll(async () => {
    expectCleanSlack(stack);
    await stack?.close();
  });

  const opened = (user: string, tab = 'home') =>
    stack.event({
      type: 'app_home_opened',
      user,
      channel: `D${user.slice(1)}`,
      tab,
      event_ts: `${Date.now() / 1000}`,
    });

  /** The Home view last published for `user`, as text. */
  const homeOf = (user: string) =>
    JSON.stringify(
      stack.slack
        .callsTo('views.publish')
        .filter((c) => c.body.user_id === user)
        .at(-1)?.body.view,
    );

  /** Presses a button of the person's Home tab, as Slack sends it: from a view of type home. */
  const pressOnHome = (user: string, actionId: string, value: string | undefined) =>
    stack.interact(
      blockActionsPayload({
        actionId,
        ...(value !== undefined ? { value } : {}),
        userId: user,
        view: { id: `V0HOME${user}`, type: 'home', hash: 'h1', blocks: [], private_metadata: '' },
      }),
    );
  const run = (run: HomeRun, t: string, c = 'C0GPU') =>
    [homeActionId(run), homeButtonValue({ t, c })] as const;

  it('publishes the Home tab of whoever opens it, and remembers their DM with the app', async () => {
    const since = stack.slack.mark();
    await opened('U0ADA');
    const published = stack.slack.calls.slice(since).filter((c) => c.method === 'views.publish');
    expect(published.map((c) => c.body.user_id)).toEqual(['U0ADA']);
    expect((published[0]!.body.view as { type: string }).type).toBe('home');
    expect(await homeOpenedBy(stack.store, ['U0ADA'])).toEqual(['D0ADA']);
  });

  it('draws nothing when the Messages tab is opened', async () => {
    const since = stack.slack.mark();
    await opened('U0ADA', 'messages');
    expect(stack.slack.calls.slice(since)).toEqual([]);
  });

  it('Start queues the machine’s start once in its channel, and the Home says where to follow it', async () => {
    await pressOnHome('U0ADA', ...run('start', 'start train-01'));
    const jobs = await stack.jobs();
    expect(jobs).toHaveLength(1);
    expect(jobs[0]!.data.command).toEqual({ kind: 'start', instance: 'train-01' });
    expect(jobs[0]!.data.ctx).toMatchObject({ userId: 'U0ADA', channelId: 'C0GPU' });
    expect(homeOf('U0ADA')).toContain(
      `\`/gpu start train-01\` is queued as job ${jobs[0]!.id}; its progress is in <#C0GPU>.`,
    );
    // Pressed again while it waits: the same job.
    await pressOnHome('U0ADA', ...run('start', 'start train-01'));
    expect(await stack.jobs()).toHaveLength(1);
    expect(homeOf('U0ADA')).toContain(`Already on it: \`/gpu start train-01\` is job ${jobs[0]!.id}.`);
  });

  it('answers a button the listener answers itself (leaving a waitlist) on the Home, without a job', async () => {
    const before = (await stack.jobs()).length;
    await pressOnHome('U0ADA', ...run('waitlist-rm', 'waitlist rm w-3f9a', 'C0ML'));
    expect(homeOf('U0ADA')).toContain("This channel's waitlist has no entry `w-3f9a`: see `/gpu waitlist`.");
    expect(await stack.jobs()).toHaveLength(before);
  });

  it('refuses a viewer’s Stop on their Home, queueing nothing', async () => {
    await pressOnHome('U0CAROL', ...run('stop', 'stop train-02'));
    expect(homeOf('U0CAROL')).toMatch(/`\/gpu stop` needs the \*operator\* role, and you have \*viewer\*/);
    expect((await stack.jobs()).filter((j) => j.data.ctx.userId === 'U0CAROL')).toEqual([]);
  });

  it('runs nothing for a button whose command is not the one its action runs, or from an older Home', async () => {
    const before = (await stack.jobs()).length;
    // A Start button carrying a removal: not one gpuops made.
    await pressOnHome('U0ADA', homeActionId('start'), homeButtonValue({ t: 'rm train-02', c: 'C0GPU' }));
    expect(homeOf('U0ADA')).toContain('That button is not one gpuops made; nothing was done.');
    for (const value of ['{"t":"start train-02"}', 'start train-02', undefined]) {
      await pressOnHome('U0ADA', homeActionId('start'), value);
      expect(homeOf('U0ADA')).toContain(
        'That button is from an older version of this page, so nothing was done',
      );
    }
    await pressOnHome(
      'U0ADA',
      'gpuops.home.run.reboot',
      homeButtonValue({ t: 'start train-02', c: 'C0GPU' }),
    );
    expect(homeOf('U0ADA')).toContain('That button is from an older version of this page');
    expect(await stack.jobs()).toHaveLength(before);
  });
});

describe('the Home tab listener, Redis gone', () => {
  it('answers a press on the Home with the reason rather than silence', async () => {
    await withRedisGone(registerHomeActions, { policy: POLICY }, async (stack) => {
      await stack.interact(
        blockActionsPayload({
          actionId: homeActionId('start'),
          value: homeButtonValue({ t: 'start train-01', c: 'C0GPU' }),
          view: { id: 'V0HOMEADA', type: 'home', hash: 'h1', blocks: [], private_metadata: '' },
        }),
      );
      const published = stack.slack.callsTo('views.publish').filter((c) => c.response?.ok === true);
      expect(published.map((c) => c.body.user_id)).toEqual(['U0ADA']);
      expect(JSON.stringify(published[0]!.body.view)).toContain(REDIS_DOWN);
    });
  });
});
