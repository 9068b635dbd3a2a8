import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeModalMetadata } from '../../src/commands/forms/modal-metadata.js';
import { PAGE_ACTIONS } from '../../src/render/instances.js';
import { accessGate } from '../../src/slack/access-gate.js';
import { registerFormSubmissions } from '../../src/slack/listeners/form-submissions.js';
import { registerGpuCommand } from '../../src/slack/listeners/gpu-command.js';
import { registerHomeActions } from '../../src/slack/listeners/home-actions.js';
import { registerPageActions } from '../../src/slack/listeners/page-actions.js';
import {
  expectCleanSlack,
  type ListenerStack,
  policyOf,
  startListenerStack,
} from '../support/listener-stack.js';
import { viewSubmissionPayload } from '../support/slack-driver.js';

// The access gate (src/slack/access-gate.ts) in front of a few listeners, as registerListeners puts it
// first: guests and members of other workspaces are refused with one sentence, in the place they
// asked from, before any listener sees the request. Ada is a member; Gus a guest; Eve signs in from
// another workspace; nobody's standing is known before Slack's users.info says it.

const GUEST_REFUSAL =
  'Guest accounts cannot use gpuops in this workspace. Ask a workspace member to run it, or an admin to set access.allow_guests in the gpuops policy.';

describe('the access gate', () => {
  let stack: ListenerStack;
  beforeAll(async () => {
    stack = await startListenerStack(
      (app, deps) => {
        app.use(accessGate(deps, deps.botTeamId));
        registerGpuCommand(app, deps);
        registerPageActions(app, deps);
        registerFormSubmissions(app, deps);
        registerHomeActions(app, deps);
      },
      {
        // The built-in access rules: no guests, no other workspaces.
        policy: policyOf('gate.yaml', 'default_role: operator'),
        slack: {
          users: [
            { id: 'U0ADA', name: 'ada' },
            { id: 'U0GUS', name: 'gus', is_restricted: true },
            { id: 'U0SAM', name: 'sam', is_ultra_restricted: true },
            { id: 'U0EVE', name: 'eve', team_id: 'T0OTHER' },
            { id: 'U0RAY', name: 'ray' },
          ],
        },
      },
    );
  });
  afterAll(async () => {
    expectCleanSlack(stack);
    await stack?.close();
  });

  const replyText = (text: string) => (JSON.parse(text) as { text?: string }).text;

  it('lets a member’s command through to the listener', async () => {
    expect((await stack.command('stop train-01')).status).toBe(200);
    expect((await stack.jobs()).map((j) => j.data.ctx.userId)).toEqual(['U0ADA']);
  });

  it('refuses a guest’s command in one sentence, and the listener never sees it', async () => {
    for (const userId of ['U0GUS', 'U0SAM']) {
      const response = await stack.command('stop train-02', { userId });
      expect(replyText(response.text)).toBe(GUEST_REFUSAL);
    }
    expect((await stack.jobs()).map((j) => j.data.ctx.userId)).toEqual(['U0ADA']);
  });

  it('refuses someone signed in from another workspace, naming it', async () => {
    const response = await stack.command('stop train-03', { userId: 'U0EVE', teamId: 'T0OTHER' });
    expect(replyText(response.text)).toMatch(
      /^gpuops takes requests only from members of its own workspace, and you are signed in from another \(T0OTHER\)\./,
    );
    expect(await stack.jobs()).toHaveLength(1);
  });

  it('answers a guest’s button privately and runs nothing', async () => {
    await stack.press(PAGE_ACTIONS.next, 'ls --page 2', { userId: 'U0GUS' });
    expect(stack.ephemeralsTo('U0GUS').at(-1)).toBe(GUEST_REFUSAL);
    expect(await stack.jobs()).toHaveLength(1);
  });

  it('replaces a guest’s form with the sentence instead of taking the submission', async () => {
    const response = await stack.interact(
      viewSubmissionPayload({
        callbackId: 'gpuops.form.create',
        userId: 'U0GUS',
        privateMetadata: encodeModalMetadata({ v: 1, form: 'create', channelId: 'C0GPU' }),
        values: {
          name: { value: { type: 'plain_text_input', value: 'guest-box' } },
          type_other: { value: { type: 'plain_text_input', value: 'h100-hgx-80gb.8x' } },
        },
      }),
    );
    const body = response.json() as { response_action: string; view: { blocks: unknown[] } };
    expect(body.response_action).toBe('update');
    expect(JSON.stringify(body.view.blocks)).toContain(GUEST_REFUSAL);
    expect(await stack.jobs()).toHaveLength(1);
  });

  it('shows a guest who opens the Home tab the sentence instead of their Home', async () => {
    const since = stack.slack.mark();
    await stack.event({ type: 'app_home_opened', user: 'U0GUS', channel: 'D0GUS', tab: 'home' });
    const published = stack.slack.calls.slice(since).filter((c) => c.method === 'views.publish');
    expect(published).toHaveLength(1);
    expect(JSON.stringify(published[0]!.body.view)).toContain(GUEST_REFUSAL);
  });

  it('refuses, rather than lets in unchecked, when Slack cannot say who someone is', async () => {
    stack.slack.failWith('users.info', 'internal_error');
    const response = await stack.command('stop train-04', { userId: 'U0RAY' });
    expect(replyText(response.text)).toBe(
      'I could not check your Slack account just now (Slack answered "internal_error"), so nothing was done. Please try again in a minute.',
    );
    expect(await stack.jobs()).toHaveLength(1);
    // Asked again once Slack answers: Ray is a member, and gets through.
    await stack.command('stop train-04', { userId: 'U0RAY' });
    expect((await stack.jobs()).map((j) => j.data.ctx.userId).sort()).toEqual(['U0ADA', 'U0RAY']);
  });
});
