import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFRESH_ACTION } from '../../../src/commands/forms/catalog-blocks.js';
import { callbackIdOf, encodeModalMetadata } from '../../../src/commands/forms/modal-metadata.js';
import { OPEN_FORM_ACTION } from '../../../src/commands/forms/open-form-button.js';
import { registerFormActions, UNKNOWN_FORM } from '../../../src/slack/listeners/form-actions.js';
import { markHomeOpened } from '../../../src/store/home-state.js';
import {
  DEFAULT_PROJECT,
  expectCleanSlack,
  type ListenerStack,
  startListenerStack,
} from '../../support/listener-stack.js';
import { blockActionsPayload } from '../../support/slack-driver.js';

// The forms' buttons (src/slack/listeners/form-actions.ts) alone: "Refresh prices and types" inside a
// form asks for one catalogue refresh of that form, and "open a form" buttons on messages and on the
// Home tab open their form. Trigger ids are checked as Slack checks them (issued, 3 s, once).

describe('the form buttons', () => {
  let stack: ListenerStack;
  beforeAll(async () => {
    stack = await startListenerStack(registerFormActions, { slack: { strictTriggerIds: true } });
    await stack.machines('train-01');
  });
  afterAll(async () => {
    expectCleanSlack(stack);
    await stack?.close();
  });

  const refresh = (view: Record<string, unknown>) =>
    stack.interact(
      blockActionsPayload({ actionId: REFRESH_ACTION, triggerId: stack.slack.issueTriggerId(), view }),
    );

  it('Refresh asks once for a refresh of that very form, however often it is pressed', async () => {
    const metadata = encodeModalMetadata({
      v: 1,
      form: 'create',
      channelId: 'C0GPU',
      projectId: DEFAULT_PROJECT,
    });
    const view = { id: 'V0FORM1', hash: 'h-1', type: 'modal', private_metadata: metadata };
    await Promise.all([refresh(view), refresh(view)]);
    await refresh(view);
    const asked = (await stack.systemJobs()).filter((j) => (j.data as { view?: unknown }).view);
    expect(asked.map((j) => j.data)).toEqual([
      {
        v: 1,
        system: 'catalog.refresh',
        projectId: DEFAULT_PROJECT,
        view: { id: 'V0FORM1', hash: 'h-1', metadata },
      },
    ]);
    // The form as it is after an update (a new hash) may ask again.
    await refresh({ ...view, hash: 'h-2' });
    expect((await stack.systemJobs()).filter((j) => (j.data as { view?: unknown }).view)).toHaveLength(2);
  });

  it('Refresh in a form from another version asks for nothing, and says nothing in a log as an error', async () => {
    const before = (await stack.systemJobs()).length;
    const lines = stack.logLines.length;
    await refresh({ id: 'V0FORM2', hash: 'h-1', type: 'modal', private_metadata: '{"v":0}' });
    await refresh({ id: 'V0FORM3', hash: 'h-1', type: 'modal', private_metadata: '' });
    expect(await stack.systemJobs()).toHaveLength(before);
    expect(stack.logLines.slice(lines).filter((l) => /"level":"(warn|error)"/.test(l))).toEqual([]);
  });

  it('an open-form button on a message opens its form for the channel it is in', async () => {
    const triggerId = stack.slack.issueTriggerId(0, 'U0ADA');
    const since = stack.slack.mark();
    await stack.interact(
      blockActionsPayload({
        actionId: `${OPEN_FORM_ACTION}.create`,
        value: JSON.stringify({ form: 'create' }),
        triggerId,
        channelId: 'C0ML',
        message: { ts: stack.slack.nextTs() },
      }),
    );
    const opened = await stack.slack.waitFor(
      'views.open',
      (c) => c.body.trigger_id === triggerId,
      5_000,
      since,
    );
    expect(opened.response).toMatchObject({ ok: true });
    const view = opened.body.view as { callback_id: string; private_metadata: string };
    expect(view.callback_id).toBe(callbackIdOf('create'));
    expect(JSON.parse(view.private_metadata)).toMatchObject({ form: 'create', channelId: 'C0ML' });
  });

  it('from the Home tab, opens the form for the person’s DM with the app', async () => {
    await markHomeOpened(stack.store, 'U0ADA', 'D0ADA');
    const triggerId = stack.slack.issueTriggerId(0, 'U0ADA');
    const since = stack.slack.mark();
    await stack.interact(
      blockActionsPayload({
        actionId: OPEN_FORM_ACTION,
        value: JSON.stringify({ form: 'create' }),
        triggerId,
        view: { id: 'V0HOMEADA', type: 'home', hash: 'h1' },
      }),
    );
    const opened = await stack.slack.waitFor(
      'views.open',
      (c) => c.body.trigger_id === triggerId,
      5_000,
      since,
    );
    const metadata = (opened.body.view as { private_metadata: string }).private_metadata;
    expect(JSON.parse(metadata)).toMatchObject({ form: 'create', channelId: 'D0ADA' });
  });

  it('says what to type instead when Slack refuses to open the form (an expired trigger)', async () => {
    await stack.interact(
      blockActionsPayload({
        actionId: OPEN_FORM_ACTION,
        value: JSON.stringify({ form: 'create' }),
        triggerId: stack.slack.issueTriggerId(10_000, 'U0ADA'),
        message: { ts: stack.slack.nextTs() },
        responseUrl: stack.slack.responseUrl({ userId: 'U0ADA', channelId: 'C0GPU' }),
      }),
    );
    expect(stack.ephemeralsTo('U0ADA').at(-1)).toMatch(
      /^I could not open the form \(Slack said "expired_trigger_id"\)\. Try again, or give the arguments instead: `\/gpu create/,
    );
  });

  it('says a button for a form this version lacks opened nothing, rather than blaming the queue', async () => {
    const since = stack.slack.mark();
    await stack.interact(
      blockActionsPayload({
        actionId: OPEN_FORM_ACTION,
        value: JSON.stringify({ form: 'gpu.teleport' }),
        triggerId: stack.slack.issueTriggerId(0, 'U0ADA'),
        message: { ts: stack.slack.nextTs() },
        responseUrl: stack.slack.responseUrl({ userId: 'U0ADA', channelId: 'C0GPU' }),
      }),
    );
    expect(stack.ephemeralsTo('U0ADA').at(-1)).toBe(UNKNOWN_FORM);
    expect(stack.slack.calls.slice(since).filter((c) => c.method === 'views.open')).toEqual([]);
  });

  it('opens nothing for a button whose value it did not make', async () => {
    const since = stack.slack.mark();
    for (const value of ['create', '{"form":"Create Now"}', '']) {
      await stack.interact(
        blockActionsPayload({
          actionId: OPEN_FORM_ACTION,
          value,
          triggerId: stack.slack.issueTriggerId(),
          message: { ts: stack.slack.nextTs() },
        }),
      );
    }
    expect(stack.slack.calls.slice(since)).toEqual([]);
  });
});
