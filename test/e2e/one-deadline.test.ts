import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePolicy } from '../../src/policy/load-policy.js';
import { ACCESS_TOO_SLOW } from '../../src/slack/request-deadline.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { until } from '../support/until.js';

// One deadline per request: the access gate's users.info, the role check's user groups and the form
// share the time Slack gives the acknowledgement. Slack is slowed the way a bad minute slows it
// (users.info 1.4 s, usergroups.users.list 1.9 s, each inside its own limit), and the person still gets
// an answer (one sentence, nothing started) where Bolt would otherwise give up and Slack say the
// command failed. The whole stack: signed requests, the real Slack SDK against the fake Slack, Redis.

const POLICY = parsePolicy(`
default_role: viewer
roles:
  operator: { groups: [S0OPS] }
`);

const USERS = [
  { id: 'U0ADA', name: 'ada' },
  { id: 'U0BEA', name: 'bea' },
];

describe('one deadline per request', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({
      shape: 'B',
      policy: POLICY,
      slack: { users: USERS, usergroups: { S0OPS: ['U0ADA', 'U0BEA'] }, strictTriggerIds: true },
      watch: { schedulers: false },
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const groupCache = () => `${stack.store.prefix}:cache:usergroup:S0OPS`;

  /** Nobody's standing or groups are cached, and Slack answers both look-ups slowly once. */
  async function slowSlack(): Promise<void> {
    // A look-up of an earlier test may still be on its way: once it has cached, the cache is dropped.
    await until('no group look-up on its way', async () =>
      (await stack.redis.exists(groupCache())) === 1 ||
      stack.slack.callsTo('usergroups.users.list').length === 0
        ? true
        : undefined,
    );
    await stack.redis.del(groupCache());
    stack.slack.slow('users.info', 1_400);
    stack.slack.slow('usergroups.users.list', 1_900);
  }

  const replyOf = (text: string) =>
    text.trim() === '' ? undefined : (JSON.parse(text) as { text?: string }).text;

  it('answers /gpu ls in time with one sentence when the look-ups together outrun it, and starts nothing', async () => {
    await slowSlack();
    const { response } = await stack.command('ls', {
      userId: 'U0ADA',
      triggerId: stack.slack.issueTriggerId(0, 'U0ADA'),
    });
    expect(response.status).toBe(200);
    expect(replyOf(response.text)).toBe(ACCESS_TOO_SLOW);
    expect(await stack.requestsQueued()).toBe(0);

    // The look-ups went on and were kept: asked again, Ada is answered at once.
    await until('the groups cached', async () =>
      (await stack.redis.exists(groupCache())) === 1 ? true : undefined,
    );
    const again = await stack.command('ls', {
      userId: 'U0ADA',
      triggerId: stack.slack.issueTriggerId(0, 'U0ADA'),
    });
    expect(again.response.status).toBe(200);
    expect(replyOf(again.response.text)).toMatch(/Looking that up/);
  });

  it('opens /gpu create in time and says in the form that access could not be checked', async () => {
    await slowSlack();
    const since = stack.slack.mark();
    const triggerId = stack.slack.issueTriggerId(0, 'U0BEA');
    const { response } = await stack.command('create', { userId: 'U0BEA', triggerId });
    expect(response.status).toBe(200);
    // Slack accepted the trigger: the form opened, and the person reads why it holds no fields.
    const opened = stack.slack.calls.slice(since).find((c) => c.method === 'views.open');
    expect(opened?.response).toMatchObject({ ok: true });
    const viewId = (opened!.response as { view: { id: string } }).view.id;
    const view = await until('the form filled in', () => {
      const shown = JSON.stringify(stack.slack.views.get(viewId)?.view.blocks ?? []);
      return shown.includes('could not check your access in time') ? shown : undefined;
    });
    expect(view).toContain(ACCESS_TOO_SLOW);
    expect(stack.slack.views.get(viewId)?.view.submit).toBeUndefined();
    expect(await stack.requestsQueued()).toBe(0);
  });
});
