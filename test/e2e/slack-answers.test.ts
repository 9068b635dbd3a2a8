import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePolicy } from '../../src/policy/load-policy.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { createFormSubmission, until } from './guardrails-kit.js';

// Answers that must arrive (issue 15, points 5 and 7): a form opens before Slack's 3 s trigger id
// expires however slow the checks are, and answers go where the requester can see them even where
// the bot is not a member.

const POLICY = parsePolicy(`
default_role: viewer
roles:
  admin: { users: [U0ADMIN] }
  operator: { groups: [S0OPS] }
approvals:
  always: [create]
  approvers: { users: [U0ADMIN] }
`);

describe('answers that arrive', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({
      shape: 'B',
      policy: POLICY,
      slack: {
        usergroups: { S0OPS: ['U0GROUPIE'] },
        conversations: { G0SECRET: { kind: 'private' } },
      },
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('opens the form before the trigger id expires when the access check is slow, then fills it in', async () => {
    // The click was 2 s ago (Slack's clock starts there), and Slack takes 1.5 s to list the group.
    stack.slack.slow('usergroups.users.list', 1_500);
    const triggerId = stack.slack.issueTriggerId(2_000, 'U0GROUPIE');
    const { response } = await stack.command('create', { userId: 'U0GROUPIE', triggerId });
    expect(response.status).toBe(200);
    expect(response.text).not.toContain('could not open the form');
    await until(() => {
      const view = stack.slack.topView('U0GROUPIE')?.view;
      return view?.callback_id === 'gpuops.form.create' && view.submit !== undefined;
    }, 'the create form, filled in');
    expect(stack.slack.callsTo('views.open').map((c) => c.response?.error)).not.toContain(
      'expired_trigger_id',
    );
  });

  it('tells the requester where a form’s request went through its response_url, where an ephemeral cannot go', async () => {
    const responseUrl = stack.responses.newUrl();
    const response = await stack.interact(
      createFormSubmission(
        'U0GROUPIE',
        { v: 1, form: 'create', channelId: 'G0SECRET', responseUrl },
        'secret-1',
      ),
    );
    expect(response.status).toBe(200);
    expect(response.text).toBe('');
    const told = await stack.responses.waitForPost((p) => responseUrl.endsWith(p.id), 10_000);
    expect(String(told.body.text)).toContain('needs an approval');
    expect(told.responseType).toBe('ephemeral');
  });
});
