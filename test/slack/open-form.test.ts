import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerGpuCommand } from '../../src/slack/listeners/gpu-command.js';
import { createOpenModal } from '../../src/slack/open-form.js';
import type { SlackDeps } from '../../src/slack/slack-deps.js';
import {
  expectCleanSlack,
  type ListenerStack,
  policyOf,
  startListenerStack,
} from '../support/listener-stack.js';

// The forms a command typed without its arguments opens (src/slack/open-form.ts), behind the /gpu
// listener as registerListeners wires it: at once from the cached catalogue, in a loading state that
// a refresh fills when none is cached, in a "preparing" state filled in place when the access check
// is slow, and never for someone the policy refuses. Trigger ids are checked as Slack checks them.

const POLICY = policyOf(
  'forms.yaml',
  'default_role: viewer',
  'roles:',
  '  operator: { users: [U0ADA], groups: [S0OPS] }',
);

describe('opening a form from /gpu', () => {
  let stack: ListenerStack;
  beforeAll(async () => {
    stack = await startListenerStack(
      (app, deps: SlackDeps) => registerGpuCommand(app, { ...deps, openModal: createOpenModal(deps) }),
      { policy: POLICY, slack: { strictTriggerIds: true, usergroups: { S0OPS: ['U0BEA', 'U0CID'] } } },
    );
  });
  afterAll(async () => {
    expectCleanSlack(stack);
    await stack?.close();
  });

  /** Types `/gpu <text>` with a fresh trigger; the acknowledgement's text and the views.open it made. */
  async function type(text: string, userId = 'U0ADA', triggerAgeMs = 0) {
    const triggerId = stack.slack.issueTriggerId(triggerAgeMs, userId);
    const since = stack.slack.mark();
    const response = await stack.command(text, { userId, triggerId });
    const reply =
      response.text.trim() === '' ? undefined : (JSON.parse(response.text) as { text?: string }).text;
    const calls = stack.slack.calls.slice(since);
    return { reply, opened: calls.find((c) => c.method === 'views.open'), calls };
  }
  /** Slack's usergroups.users.list answers slowly, and the cached membership is gone: the check takes long. */
  async function slowCheck(): Promise<void> {
    await stack.redis.del(`${stack.store.prefix}:cache:usergroup:S0OPS`);
    stack.slack.slow('usergroups.users.list', 900);
  }
  const blocksOf = (view: unknown) => JSON.stringify((view as { blocks?: unknown[] }).blocks ?? []);

  it('opens in a loading state when no catalogue is cached, and asks for a refresh of that very form', async () => {
    const { reply, opened } = await type('create');
    expect(reply).toBeUndefined();
    expect(opened?.response).toMatchObject({ ok: true });
    expect(blocksOf(opened!.body.view)).toContain('Loading configurations, prices and instance types');
    const viewId = (opened!.response as { view: { id: string } }).view.id;
    const refreshes = (await stack.systemJobs()).map((j) => j.data as { view?: { id: string } });
    expect(refreshes.map((d) => d.view?.id)).toContain(viewId);
  });

  it('opens at once with prices and types from the cached catalogue', async () => {
    await stack.machines('train-01');
    const { reply, opened } = await type('create');
    expect(reply).toBeUndefined();
    const blocks = blocksOf(opened!.body.view);
    expect(blocks).toContain('*H100_SXM5_80GB* — $2.89 per GPU-hour');
    expect(blocks).toContain('"block_id":"name"');
  });

  it('answers someone the policy refuses instead of opening a form', async () => {
    const { reply, calls } = await type('create', 'U0CAROL');
    expect(reply).toMatch(/^`\/gpu create` needs the \*operator\* role, and you have \*viewer\*/);
    expect(calls.filter((c) => c.method.startsWith('views.'))).toEqual([]);
  });

  it('opens a preparing form before the trigger expires when the access check is slow, then fills it in', async () => {
    await slowCheck();
    const { reply, opened } = await type('create', 'U0BEA');
    expect(reply).toBeUndefined();
    expect(blocksOf(opened!.body.view)).toContain('Preparing the form');
    const viewId = (opened!.response as { view: { id: string } }).view.id;
    const filled = stack.slack.callsTo('views.update').find((c) => c.body.view_id === viewId);
    expect(blocksOf(filled?.body.view)).toContain('"block_id":"name"');
    expect(stack.slack.views.get(viewId)?.view.submit).toMatchObject({ text: 'Create' });
  });

  it('replaces a preparing form with the refusal when a slow check refuses', async () => {
    await slowCheck();
    const { opened } = await type('create', 'U0DOT');
    const viewId = (opened!.response as { view: { id: string } }).view.id;
    const filled = stack.slack.callsTo('views.update').find((c) => c.body.view_id === viewId);
    expect(blocksOf(filled?.body.view)).toMatch(/:no_entry: `\/gpu create` needs the \*operator\* role/);
    expect(stack.slack.views.get(viewId)?.view.submit).toBeUndefined();
  });

  it('says what to type instead when Slack will not open the form (the trigger expired)', async () => {
    const { reply } = await type('create', 'U0ADA', 10_000);
    expect(reply).toMatch(
      /^I could not open the form \(Slack said "expired_trigger_id"\)\. Try again, or give the arguments instead: `\/gpu create/,
    );
  });
});
