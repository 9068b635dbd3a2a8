import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeModalMetadata } from '../../../src/commands/forms/modal-metadata.js';
import type { StoredView } from '../../../src/devkit/fake-slack-api.js';
import { registerFormSubmissions } from '../../../src/slack/listeners/form-submissions.js';
import { REDIS_DOWN } from '../../../src/slack/listeners/gpu-command.js';
import { openForm } from '../../../src/slack/open-form.js';
import {
  expectCleanSlack,
  type ListenerStack,
  policyOf,
  startListenerStack,
  withRedisGone,
} from '../../support/listener-stack.js';
import { viewSubmissionPayload } from '../../support/slack-driver.js';

// Submit on a form (src/slack/listeners/form-submissions.ts) alone: bad fields answered on their field
// with the form kept open, secrets sealed before anything is queued, one job per form however often
// Slack delivers the submission. Ada operates; Carol may only look.

const POLICY = policyOf(
  'forms.yaml',
  'default_role: viewer',
  'roles:',
  '  operator: { users: [U0ADA] }',
  'approvals:',
  '  threshold_per_hour: 100',
);

type Errors = { response_action?: string; errors?: Record<string, string> };

describe('form submissions', () => {
  let stack: ListenerStack;
  beforeAll(async () => {
    stack = await startListenerStack(registerFormSubmissions, { policy: POLICY });
    await stack.machines('train-01');
  });
  afterAll(async () => {
    expectCleanSlack(stack);
    await stack?.close();
  });

  /** The create form as `/gpu create` opens it for `userId` in C0GPU. */
  async function createForm(userId = 'U0ADA'): Promise<StoredView> {
    const result = await openForm(stack.deps, {
      form: 'create',
      prefill: {},
      triggerId: stack.slack.issueTriggerId(0, userId),
      channelId: 'C0GPU',
      userId,
    });
    if (!result.ok) throw new Error(`the form did not open: ${result.text}`);
    return stack.slack.views.get(result.viewId)!;
  }

  /** Presses Submit with these fields typed (text inputs, each under action id `value`). */
  const submit = (view: StoredView, fields: Record<string, string>, userId = 'U0ADA', metadata?: string) =>
    stack.interact(
      viewSubmissionPayload({
        callbackId: String(view.view.callback_id),
        userId,
        values: Object.fromEntries(
          Object.entries(fields).map(([block, value]) => [
            block,
            { value: { type: 'plain_text_input', value } },
          ]),
        ),
        privateMetadata: metadata ?? String(view.view.private_metadata),
        viewId: view.id,
        hash: view.hash,
        blocks: view.view.blocks as unknown[],
      }),
    );

  const sealedKeys = () => stack.redis.keys(`${stack.store.prefix}:sealed:*`);

  it('answers a bad name on its own field, keeps the form open, and queues nothing', async () => {
    const view = await createForm();
    const since = stack.slack.mark();
    const body = (await submit(view, { name: 'bad name!', type_other: 'h100-hgx-80gb.8x' })).json() as Errors;
    expect(body.response_action).toBe('errors');
    expect(Object.keys(body.errors ?? {})).toEqual(['name']);
    expect(body.errors?.name).toMatch(/a name has 1 to 63 characters/);
    expect(await stack.jobs()).toEqual([]);
    expect(stack.slack.calls.slice(since)).toEqual([]);
  });

  it('queues the machine once with its user data sealed, closing the form, however often Slack delivers Submit', async () => {
    const secret = `#cloud-config\nruncmd: [echo hunter2-${randomBytes(6).toString('hex')}]\n`;
    const view = await createForm();
    const since = stack.slack.mark();
    const fields = { name: 'form-1', type_other: 'h100-hgx-80gb.8x', user_data: secret };
    const [first, second] = await Promise.all([submit(view, fields), submit(view, fields)]);
    // An empty acknowledgement closes the form.
    expect([first!.text, second!.text]).toEqual(['', '']);
    const jobs = await stack.jobs();
    expect(jobs).toHaveLength(1);
    const job = jobs[0]!;
    expect(job.data.command).toMatchObject({ kind: 'create', name: 'form-1', type: 'h100-hgx-80gb.8x' });
    expect(job.data.ctx).toMatchObject({ userId: 'U0ADA', channelId: 'C0GPU' });
    expect(job.data.sealed?.userData?.sealedRef).toMatch(/^[A-Za-z0-9_-]{24}$/);
    // The secret is sealed once (the duplicate's copy is discarded) and is nowhere in plain text.
    expect(await sealedKeys()).toEqual([
      `${stack.store.prefix}:sealed:${job.data.sealed!.userData!.sealedRef}`,
    ]);
    const needle = secret.match(/hunter2-\w+/)![0];
    expect(JSON.stringify(job.data)).not.toContain(needle);
    expect(JSON.stringify(job.data)).not.toContain(Buffer.from(secret.trimEnd()).toString('base64'));
    expect(stack.logLines.filter((l) => l.includes(needle))).toEqual([]);
    expect(JSON.stringify(stack.slack.calls.map((c) => c.body))).not.toContain(needle);
    // Its message goes to the channel the form was opened from.
    const posted = await stack.slack.waitFor(
      'chat.postMessage',
      (c) => c.body.channel === 'C0GPU',
      5_000,
      since,
    );
    expect(String(posted.body.text)).toMatch(/^Queued: \/gpu create form-1 h100-hgx-80gb\.8x/);
  });

  it('puts a type the cloud does not sell on the field it was typed in', async () => {
    const view = await createForm();
    const body = (await submit(view, { name: 'form-2', type_other: 'notatype.1x' })).json() as Errors;
    expect(body.response_action).toBe('errors');
    expect(Object.keys(body.errors ?? {})).toEqual(['type_other']);
    expect(body.errors?.type_other).toContain('"notatype.1x" is not an instance type this cloud offers');
    expect((await stack.jobs()).map((j) => j.data.command.name)).not.toContain('form-2');
  });

  it('refuses a viewer on the form itself, discarding the secret they typed', async () => {
    const view = await createForm('U0CAROL');
    const sealed = (await sealedKeys()).length;
    const body = (
      await submit(
        view,
        { name: 'form-3', type_other: 'h100-hgx-80gb.8x', user_data: '#!/bin/sh\necho hi' },
        'U0CAROL',
      )
    ).json() as Errors;
    expect(body.response_action).toBe('errors');
    const [message] = Object.values(body.errors ?? {});
    expect(message).toMatch(/^\/gpu create needs the operator role, and you have viewer/);
    expect(await sealedKeys()).toHaveLength(sealed);
    expect((await stack.jobs()).filter((j) => j.data.ctx.userId === 'U0CAROL')).toEqual([]);
  });

  it('asks to reopen a form another version opened, on its first field, and queues nothing', async () => {
    const view = await createForm();
    const before = (await stack.jobs()).length;
    for (const metadata of ['{"v":2,"form":"create"}', 'not json']) {
      const body = (
        await submit(view, { name: 'form-4', type_other: 'h100-hgx-80gb.8x' }, 'U0ADA', metadata)
      ).json() as Errors;
      expect(body).toEqual({
        response_action: 'errors',
        errors: { name: 'This form was opened by another version of gpuops; close it and open it again.' },
      });
    }
    expect(await stack.jobs()).toHaveLength(before);
  });
});

describe('form submissions that need an approval', () => {
  it('closes the form, sends the request to the approvers with its secret still sealed, and tells the requester', async () => {
    const policy = policyOf(
      'costly.yaml',
      'default_role: operator',
      'approvals:',
      '  threshold_per_hour: 10',
    );
    const stack = await startListenerStack(registerFormSubmissions, { policy });
    try {
      await stack.machines();
      const opened = await openForm(stack.deps, {
        form: 'create',
        prefill: {},
        triggerId: stack.slack.issueTriggerId(0, 'U0ADA'),
        channelId: 'C0GPU',
        userId: 'U0ADA',
      });
      const view = stack.slack.views.get(opened.ok ? opened.viewId : '')!;
      const response = await stack.interact(
        viewSubmissionPayload({
          callbackId: String(view.view.callback_id),
          privateMetadata: String(view.view.private_metadata),
          blocks: view.view.blocks as unknown[],
          values: {
            name: { value: { type: 'plain_text_input', value: 'big-1' } },
            type_other: { value: { type: 'plain_text_input', value: 'h100-hgx-80gb.8x' } },
            user_data: { value: { type: 'plain_text_input', value: '#!/bin/sh\necho costly' } },
          },
        }),
      );
      expect(response.text).toBe('');
      expect(await stack.jobs()).toEqual([]);
      const [pending] = await stack.guardrails.approvals.listPending();
      expect(pending?.command).toMatchObject({ kind: 'create', name: 'big-1' });
      expect(pending?.sealed?.userData?.sealedRef).toBeDefined();
      expect(await stack.redis.keys(`${stack.store.prefix}:sealed:*`)).toHaveLength(1);
      expect(stack.ephemeralsTo('U0ADA').at(-1)).toMatch(
        /^:raised_hand: `\/gpu create big-1 h100-hgx-80gb\.8x` needs an approval/,
      );
      expectCleanSlack(stack);
    } finally {
      await stack.close();
    }
  });
});

describe('form submissions, Redis gone', () => {
  it('keeps the form open with the reason on its first field, and queues nothing', async () => {
    await withRedisGone(registerFormSubmissions, { policy: POLICY }, async (stack) => {
      const response = await stack.interact(
        viewSubmissionPayload({
          callbackId: 'gpuops.form.create',
          privateMetadata: encodeModalMetadata({ v: 1, form: 'create', channelId: 'C0GPU' }),
          blocks: [
            { type: 'input', block_id: 'name', element: { type: 'plain_text_input', action_id: 'value' } },
            {
              type: 'input',
              block_id: 'type_other',
              element: { type: 'plain_text_input', action_id: 'value' },
            },
          ],
          values: {
            name: { value: { type: 'plain_text_input', value: 'form-9' } },
            type_other: { value: { type: 'plain_text_input', value: 'h100-hgx-80gb.8x' } },
          },
        }),
      );
      expect(response.json()).toEqual({ response_action: 'errors', errors: { name: REDIS_DOWN } });
    });
  });
});
