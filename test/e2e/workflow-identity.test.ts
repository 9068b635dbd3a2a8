import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePolicy } from '../../src/policy/load-policy.js';
import { ed25519PublicKey } from '../cloud/ssh-key-fixtures.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { runStep, stepResult } from '../support/workflow-steps.js';
import {
  buttonValue,
  click,
  ephemeralTo,
  type Pending,
  primeCatalog,
  requestJobsInQueue,
  stored,
  until,
} from './guardrails-kit.js';

// Who a Workflow Builder step acts as (docs/workflows.md, "Who a step acts as"): the person Slack
// fills in as having used the workflow, never a person a builder typed into an input, and never with
// a role the step's channel would lend. Each test is an attack a workflow's builder could make through
// the inputs they control: a `user_id` naming someone else (and a `user_context` typed to look like
// Slack's), and a progress channel the policy grants a role to. The fake Slack fills the step's
// Slack-filled input with the person who used the workflow, over whatever the inputs say, as Slack does.

const ROOT = 'U0ROOT';
const ADA = 'U0ADA';
const BOB = 'U0BOB';
const MALLORY = 'U0MALLORY';
const VIEWER = 'U0VIEW';
const GUEST = 'U0GUEST';
const GONE = 'U0GONE';
const CHANNEL = 'C0GPU';
const OPS = 'C0OPS';
const APPROVALS = 'C0APPROVE';

const POLICY = parsePolicy(`
default_role: viewer
roles:
  admin: { users: [${ROOT}] }
  operator: { users: [${ADA}, ${BOB}, ${MALLORY}], channels: [${OPS}] }
approvals:
  threshold_per_hour: 10
  approvers: { users: [${BOB}] }
  channel: ${APPROVALS}
  expires_after: 1h
`);

/** What a builder can type to pretend to be `userId`: the old free input, and a look-alike context. */
const posingAs = (userId: string) => ({ user_id: userId, user_context: { id: userId, secret: 'typed' } });

describe('who a workflow step acts as, shape A', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({
      shape: 'A',
      policy: POLICY,
      slack: {
        users: [
          { id: ADA, name: 'ada', real_name: 'Augusta Ada King', display_name: 'Ada Lovelace' },
          { id: MALLORY, name: 'mallory', real_name: 'Mallory Mallet', display_name: 'mallory' },
          { id: GUEST, name: 'gus', is_restricted: true },
          { id: GONE, name: 'gone', deleted: true },
        ],
      },
    });
    await primeCatalog(stack);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('runs a viewer’s step that names an admin as the viewer: refused, nothing made, the refusal on the audit trail', async () => {
    const run = await runStep(stack, VIEWER, 'create_instance', {
      ...posingAs(ROOT),
      name: 'as-root',
      instance_type: 'h100-hgx-80gb.1x',
    });
    expect(await run.ended()).toEqual({
      state: 'failed',
      error:
        "gpuops refused this step: /gpu create needs the operator role, and you have viewer. Ask an admin to grant operator, in the gpuops policy file, to you or to a user group you are in; a channel's role does not count for a workflow step.",
    });
    expect((await stack.cloud.listInstances()).map((i) => i.name)).not.toContain('as-root');
    expect(await requestJobsInQueue(stack)).toEqual([]);
    const refusal = await until(
      async () =>
        (await stack.guardrails.audit.latest(20)).find(
          (e) => e.operation === 'create' && e.outcome === 'refused',
        ),
      'the refusal on the audit trail',
    );
    expect(refusal.actor).toBe(VIEWER);
    expect(refusal.parameters).toMatchObject({
      step: 'create_instance',
      functionExecutionId: run.executionId,
      workflowExecutionId: run.workflowExecutionId,
      needed: 'operator',
    });
  });

  it('adds a Slurm user under the name of whoever used the workflow, never the person a builder typed', async () => {
    const key = ed25519PublicKey('mallory@laptop');
    const added = await stepResult(stack, MALLORY, 'add_slurm_user', {
      ...posingAs(ADA),
      cluster: 'slurm-1',
      public_key: key,
      sudo: true,
    });
    expect(added).toMatchObject({ state: 'completed', outputs: { username: 'mallory', cluster: 'slurm-1' } });
    const cluster = (await stack.cloud.listSlurmClusters()).find((c) => c.name === 'slurm-1')!;
    const users = await stack.cloud.listSlurmUsers({ clusterId: cluster.id });
    const holders = users.filter((u) => u.sshKeys.some((k) => k.includes(key.split(' ')[1]!)));
    expect(holders.map((u) => u.username)).toEqual(['mallory']);
    expect(users.map((u) => u.username)).not.toContain('ada_lovelace');
    const trail = (await stack.guardrails.audit.latest(50)).filter((e) => e.operation === 'slurm.adduser');
    expect(new Set(trail.map((e) => e.actor))).toEqual(new Set([MALLORY]));
  });

  it('refuses the step of a guest who used the workflow, whoever the inputs name', async () => {
    const end = await stepResult(stack, GUEST, 'get_capacity', posingAs(ADA));
    expect(end.state).toBe('failed');
    expect((end as { error: string }).error).toMatch(
      /^gpuops refused this step: Guest accounts cannot use gpuops/,
    );
    expect(await requestJobsInQueue(stack)).toEqual([]);
  });

  it('refuses the step of a deactivated account that used the workflow, whoever the inputs name', async () => {
    const end = await stepResult(stack, GONE, 'stop_instance', { ...posingAs(ADA), instance: 'any-box' });
    expect(end).toEqual({
      state: 'failed',
      error:
        'gpuops refused this step: This Slack account is deactivated, so gpuops does nothing for it. Ask a workspace admin to reactivate it, or have an active member run this instead.',
    });
    expect(await requestJobsInQueue(stack)).toEqual([]);
  });

  it('lends a viewer no role through the step’s channel, even one the policy grants operator', async () => {
    const box = await stack.cloud.createInstance({ name: 'ops-box', type: 'h100-hgx-80gb.1x' });
    await until(
      async () => (await stack.cloud.getInstance({ id: box.id })).state === 'running' || undefined,
      'ops-box running',
    );
    const end = await stepResult(stack, VIEWER, 'stop_instance', { channel_id: OPS, instance: 'ops-box' });
    expect(end).toEqual({
      state: 'failed',
      error:
        "gpuops refused this step: /gpu stop needs the operator role, and you have viewer. Ask an admin to grant operator, in the gpuops policy file, to you or to a user group you are in; a channel's role does not count for a workflow step.",
    });
    expect(await requestJobsInQueue(stack)).toEqual([]);
    expect((await stack.cloud.getInstance({ id: box.id })).state).not.toMatch(/^stop/);
    // An operator's step in the same channel runs.
    const byAda = await stepResult(stack, ADA, 'stop_instance', { channel_id: OPS, instance: 'ops-box' });
    expect(byAda, JSON.stringify(byAda)).toMatchObject({ state: 'completed', outputs: { state: 'stopped' } });
  });

  it('keeps an approver from approving their own step by naming someone else as the requester', async () => {
    const since = stack.slack.mark();
    const run = await runStep(stack, BOB, 'create_instance', {
      ...posingAs(ADA),
      channel_id: CHANNEL,
      name: 'bob-big',
      instance_type: 'h100-hgx-80gb.8x',
    });
    expect(run.response.status).toBe(200);
    const posted = await stack.slack.waitFor(
      'chat.postMessage',
      (c) => c.body.channel === APPROVALS,
      5_000,
      since,
    );
    const card = stack.slack.message(APPROVALS, String((posted.response as { ts: string }).ts))!;
    const pending: Pending = {
      approvalId: buttonValue(card, 'Approve'),
      ack: '',
      card,
      cardChannel: APPROVALS,
      requesterTs: undefined,
    };
    expect((await stored(stack, pending.approvalId)).requester).toBe(BOB);
    expect((await click(stack, pending, BOB)).status).toBe(200);
    await ephemeralTo(stack, BOB, /asked for this yourself/);
    expect((await stored(stack, pending.approvalId)).state).toBe('pending');
    expect(stack.slack.functionRuns.runs.get(run.executionId)!.state).toBe('running');
    expect(await requestJobsInQueue(stack)).toEqual([]);
    expect((await stack.cloud.listInstances()).map((i) => i.name)).not.toContain('bob-big');
  });
});
