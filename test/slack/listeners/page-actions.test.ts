import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_ACTIONS } from '../../../src/render/instances.js';
import { REDIS_DOWN } from '../../../src/slack/listeners/gpu-command.js';
import { registerPageActions } from '../../../src/slack/listeners/page-actions.js';
import {
  expectCleanSlack,
  type ListenerStack,
  policyOf,
  startListenerStack,
  withRedisGone,
} from '../../support/listener-stack.js';

// Previous and Next under a paged list (src/slack/listeners/page-actions.ts) alone: a press queues the
// list's read for that page as the presser, answered on the press's response_url; anything else is
// not run.

// Listing machines is for operators here, so that a viewer's press is refused.
const POLICY = policyOf(
  'pages.yaml',
  'default_role: viewer',
  'roles:',
  '  operator: { users: [U0ADA] }',
  'permissions:',
  '  kinds: { ls: operator }',
);

describe('the list page buttons', () => {
  let stack: ListenerStack;
  beforeAll(async () => {
    stack = await startListenerStack(registerPageActions, { policy: POLICY });
  });
  afterAll(async () => {
    expectCleanSlack(stack);
    await stack?.close();
  });

  it('queues the next page once for the presser, however often the press arrives', async () => {
    const ts = stack.slack.nextTs();
    expect((await stack.press(PAGE_ACTIONS.next, 'ls --page 2', { ts })).status).toBe(200);
    const [job] = await stack.jobs();
    expect(job!.data.command).toMatchObject({ kind: 'ls', page: 2 });
    expect(job!.data.ctx).toMatchObject({ userId: 'U0ADA', channelId: 'C0GPU' });
    // The answer replaces the list in place: the job has the press's response_url.
    expect(job!.data.ctx.responseUrl).toMatch(/\/response\/R\d+$/);
    // A double click: the same request, one job.
    await stack.press(PAGE_ACTIONS.next, 'ls --page 2', { ts });
    await stack.press(PAGE_ACTIONS.previous, 'ls --page 2', { ts });
    expect((await stack.jobs()).filter((j) => j.data.command.kind === 'ls')).toHaveLength(1);
  });

  it('refuses someone the policy does not let list, privately, and queues nothing', async () => {
    const before = (await stack.jobs()).length;
    await stack.press(PAGE_ACTIONS.next, 'ls --page 3', { userId: 'U0CAROL' });
    const [refusal] = stack.ephemeralsTo('U0CAROL');
    expect(refusal).toMatch(/^`\/gpu ls` needs the \*operator\* role, and you have \*viewer\*/);
    expect(await stack.jobs()).toHaveLength(before);
  });

  it('runs nothing a page button does not carry: a change, a typo, no value at all', async () => {
    const before = (await stack.jobs()).length;
    for (const value of ['stop train-01', 'rm train-01', 'lss --page 2', '']) {
      expect((await stack.press(PAGE_ACTIONS.next, value)).status).toBe(200);
    }
    expect(await stack.press(PAGE_ACTIONS.previous, undefined)).toMatchObject({ status: 200 });
    expect(await stack.jobs()).toHaveLength(before);
    expect(stack.ephemeralsTo('U0ADA')).toEqual([]);
  });
});

describe('the list page buttons, Redis gone', () => {
  it('tells the presser privately that nothing was started', async () => {
    await withRedisGone(registerPageActions, { policy: POLICY }, async (stack) => {
      await stack.press(PAGE_ACTIONS.next, 'ls --page 2');
      expect(stack.ephemeralsTo('U0ADA')).toEqual([REDIS_DOWN]);
    });
  });
});
