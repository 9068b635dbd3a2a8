import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePolicy } from '../../src/policy/load-policy.js';
import { ed25519PublicKey } from '../cloud/ssh-key-fixtures.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { runStep, stepResult } from '../support/workflow-steps.js';
import {
  buttonValue,
  click,
  denyWithReason,
  type Pending,
  primeCatalog,
  requestJobsInQueue,
  stored,
  until,
} from './guardrails-kit.js';

// Workflow Builder custom steps end to end: a workflow reaches a gpuops step, Slack delivers the
// signed function_executed event, the step runs as a job through the policy, approvals and audit, and
// the job ends the step with functions.completeSuccess (its outputs) or functions.completeError (a
// sentence the workflow's author reads). docs/workflows.md.

const ADA = 'U0ADA';
const BOB = 'U0BOB';
const VIEWER = 'U0VIEW';
const CHANNEL = 'C0GPU';
const GUEST = 'U0GUEST';

describe('workflow steps, shape A, every step', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({
      shape: 'A',
      slack: {
        users: [{ id: ADA, name: 'ada', real_name: 'Augusta Ada King', display_name: 'Ada Lovelace' }],
      },
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('creates, stops and starts an instance, each step giving its state, id and address', async () => {
    const run = await runStep(stack, ADA, 'create_instance', {
      name: 'wf-01',
      instance_type: 'h100-hgx-80gb.1x',
    });
    const created = await run.ended();
    expect(created.state, JSON.stringify(created)).toBe('completed');
    const made = (await stack.cloud.listInstances()).find((i) => i.name === 'wf-01')!;
    expect(created).toMatchObject({
      outputs: { instance_name: 'wf-01', instance_id: made.id, state: 'running' },
    });
    expect((created as unknown as { outputs: { ip_address: string } }).outputs.ip_address).toMatch(
      /^\d+\.\d+\.\d+\.\d+$/,
    );

    // On the audit trail as Ada's request, made by the step, and its job's start and outcome, each
    // naming the step's run and the workflow's run, so an auditor can find them in Slack's logs.
    const trail = (await stack.guardrails.audit.latest(50)).filter((e) => e.operation === 'create');
    const runs = { functionExecutionId: run.executionId, workflowExecutionId: run.workflowExecutionId };
    expect(run.workflowExecutionId).toMatch(/^Wx/);
    expect(trail.map((e) => [e.event, e.outcome, e.actor, e.parameters])).toEqual(
      expect.arrayContaining(
        (
          [
            ['request', 'queued'],
            ['start', 'started'],
            ['outcome', 'done'],
          ] as const
        ).map(([event, outcome]) => [
          event,
          outcome,
          ADA,
          expect.objectContaining({ step: 'create_instance', ...runs }),
        ]),
      ),
    );

    const stopped = await stepResult(stack, ADA, 'stop_instance', { instance: 'wf-01' });
    expect(stopped).toEqual({
      state: 'completed',
      outputs: { instance_name: 'wf-01', instance_id: made.id, state: 'stopped' },
    });
    expect((await stack.cloud.getInstance({ id: made.id })).state).toBe('stopped');

    // With a channel, the request shows there as a /gpu one does.
    const since = stack.slack.mark();
    const started = await stepResult(stack, ADA, 'start_instance', {
      channel_id: CHANNEL,
      instance: made.id,
    });
    expect(started).toMatchObject({
      state: 'completed',
      outputs: { state: 'running', instance_name: 'wf-01' },
    });
    const shown = stack.slack
      .callsTo('chat.update')
      .filter((c) => c.index >= since && c.body.channel === CHANNEL);
    expect(shown.map((c) => String(c.body.text)).at(-1)).toMatch(/^Done: .*wf-01 is running at /);
  });

  it('adds the new hire to the Slurm cluster with the key from the form, and gives the login line', async () => {
    const key = ed25519PublicKey('new-hire@laptop');
    const added = await stepResult(stack, ADA, 'add_slurm_user', {
      cluster: 'slurm-1',
      public_key: key,
    });
    expect(added).toMatchObject({
      state: 'completed',
      outputs: { username: 'ada_lovelace', cluster: 'slurm-1' },
    });
    const outputs = (added as { outputs: Record<string, string> }).outputs;
    const cluster = (await stack.cloud.listSlurmClusters()).find((c) => c.name === 'slurm-1')!;
    expect(outputs.login_command).toBe(`ssh ada_lovelace@${cluster.loginNodes![0]!.publicIP}`);
    const users = await stack.cloud.listSlurmUsers({ clusterId: cluster.id });
    const user = users.find((u) => u.username === 'ada_lovelace')!;
    expect(user.sshKeys.map((k) => k.split(' ').slice(0, 2).join(' '))).toEqual([
      key.split(' ').slice(0, 2).join(' '),
    ]);
    expect(user.sudo).toBe(false);
  });

  it('tells what capacity there is, for every type or one, and names the types when one is unknown', async () => {
    const all = await stepResult(stack, ADA, 'get_capacity', {});
    expect(all.state).toBe('completed');
    const outputs = (all as { outputs: Record<string, string | number> }).outputs;
    expect(outputs.summary).toContain('h100-hgx-80gb.8x: offered');
    expect(outputs.types_available).toBeGreaterThan(0);
    const one = await stepResult(stack, ADA, 'get_capacity', { instance_type: 'h100-hgx-80gb.8x' });
    expect(one).toEqual({
      state: 'completed',
      outputs: { summary: 'h100-hgx-80gb.8x: offered', types_available: 1 },
    });
    const unknown = await stepResult(stack, ADA, 'get_capacity', { instance_type: 'h900.1x' });
    expect(unknown.state).toBe('failed');
    expect((unknown as { error: string }).error).toMatch(
      /^No instance type named h900\.1x is listed here\. Use one of: .*h100-hgx-80gb\.8x/,
    );
  });

  it('fails a step given an input of the wrong type with a sentence, and starts nothing', async () => {
    await stack.drained();
    const since = stack.slack.mark();
    const before = (await stack.guardrails.audit.latest(500)).length;
    const wrong = await stepResult(stack, ADA, 'stop_instance', { instance: 42 });
    expect(wrong).toEqual({
      state: 'failed',
      error:
        'The step\'s input "instance" (Instance) must be text, but it got 42. Pick a value of that type where the step is set up in Workflow Builder.',
    });
    const sudo = await stepResult(stack, ADA, 'add_slurm_user', {
      cluster: 'slurm-1',
      public_key: ed25519PublicKey('x@y'),
      sudo: 'yes',
    });
    expect((sudo as { error: string }).error).toContain(
      '"sudo" (Sudo) must be true or false (boolean), but it got "yes"',
    );
    const badName = await stepResult(stack, ADA, 'create_instance', {
      name: 'my box',
      instance_type: 'h100-hgx-80gb.1x',
    });
    expect((badName as { error: string }).error).toMatch(
      /^The step's input "name" \("my box"\) is not valid: a name has 1 to 63/,
    );
    // A key that does not parse says what a public key looks like, not just that it should be one.
    const badKey = await stepResult(stack, ADA, 'add_slurm_user', { cluster: 'slurm-1', public_key: 'bad' });
    expect((badKey as { error: string }).error).toContain(
      'is not valid: an OpenSSH public key is one line "<type> <base64> [comment]", its type one of ssh-rsa,',
    );
    // The listener failed it with the run's own bot_access_token, which is never stored.
    const failedBy = stack.slack
      .callsTo('functions.completeError')
      .filter((c) => c.index >= since)
      .map((c) => c.token);
    expect(failedBy.length).toBeGreaterThan(0);
    for (const token of failedBy) expect(token).toMatch(/^xwfp-/);
    // A run Slack filled with no person (a workflow with nobody behind it) acts for no one, whoever
    // a typed user_id names.
    const noUser = await stepResult(stack, undefined, 'get_capacity', { user_id: ADA });
    expect(noUser).toEqual({
      state: 'failed',
      error:
        'The step needs its input "user_context" (Person who used this workflow), and Slack gave no person in it: gpuops acts only as the person Slack fills in, never one typed into the step. Start the workflow from a link, a shortcut or a button (or put a step with a button before this one), or add the step again in Workflow Builder.',
    });
    expect(await requestJobsInQueue(stack)).toEqual([]);
    expect((await stack.cloud.listInstances()).map((i) => i.name)).not.toContain('my box');
    expect((await stack.guardrails.audit.latest(500)).length).toBe(before);
  });

  it('fails the step with what went wrong when the job fails, in plain words', async () => {
    const end = await stepResult(stack, ADA, 'stop_instance', { instance: 'nosuchbox' });
    expect(end.state).toBe('failed');
    const error = (end as { error: string }).error;
    expect(error).toMatch(/nosuchbox/);
    expect(error).not.toMatch(/[`*]|:[a-z_]+:/);
  });

  it('runs a step once when Slack delivers its event twice, and ends it with the bot’s own token', async () => {
    const run = await runStep(stack, ADA, 'get_capacity', {});
    expect((await run.redeliver()).status).toBe(200);
    const end = await run.ended();
    expect(end.state).toBe('completed');
    await stack.drained();
    const mine = (method: string) =>
      stack.slack.callsTo(method).filter((c) => c.body.function_execution_id === run.executionId);
    expect(mine('functions.completeError')).toHaveLength(0);
    const completions = mine('functions.completeSuccess');
    expect(completions).toHaveLength(1);
    expect(completions[0]!.token).toBe('xoxb-test');
  });
});

const APPROVALS = 'C0APPROVE';
const POLICY = parsePolicy(`
default_role: viewer
roles:
  operator: { users: [${ADA}, ${BOB}] }
approvals:
  threshold_per_hour: 10
  approvers: { users: [${BOB}] }
  channel: ${APPROVALS}
  expires_after: 1h
`);

describe('workflow steps under the policy, shape B', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({
      shape: 'B',
      policy: POLICY,
      slack: { users: [{ id: GUEST, name: 'gus', is_restricted: true }] },
    });
    await primeCatalog(stack);
  });
  afterAll(async () => {
    await stack?.close();
  });

  /** Runs a costly create as a step; resolves once its approval card is up. */
  async function costlyCreate(name: string) {
    const since = stack.slack.mark();
    const run = await runStep(stack, ADA, 'create_instance', {
      channel_id: CHANNEL,
      name,
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
    return { run, pending };
  }

  it('a costly create waits for an approver, and the step completes once approved', async () => {
    const { run, pending } = await costlyCreate('big-wf');
    expect(JSON.stringify(pending.card.blocks)).toContain('/gpu create big-wf h100-hgx-80gb.8x');
    const waiting = stack.slack.functionRuns.runs.get(run.executionId)!;
    expect(waiting.state).toBe('running');
    expect(await requestJobsInQueue(stack)).toEqual([]);
    // The approval keeps which run to end, never the run's token.
    const kept = JSON.stringify(await stored(stack, pending.approvalId));
    expect(kept).toContain(run.executionId);
    expect(kept).not.toContain(waiting.token);
    expect((await click(stack, pending, BOB)).status).toBe(200);
    const end = await run.ended(30_000);
    expect(end).toMatchObject({ state: 'completed', outputs: { instance_name: 'big-wf', state: 'running' } });
  });

  it('a denied request fails the step with the approver’s reason, and nothing is created', async () => {
    const { run, pending } = await costlyCreate('denied-wf');
    await denyWithReason(stack, pending, BOB, 'no 8-GPU boxes this week');
    const end = await run.ended();
    expect(end.state).toBe('failed');
    expect((end as { error: string }).error).toBe(
      `/gpu create denied-wf h100-hgx-80gb.8x was denied by an approver (${BOB}): "no 8-GPU boxes this week". Nothing was changed; talk to the approvers, then run the workflow again.`,
    );
    expect((await stack.cloud.listInstances()).map((i) => i.name)).not.toContain('denied-wf');
  });

  it('fails a step this cloud shape cannot run, saying so, and runs nothing', async () => {
    const end = await stepResult(stack, ADA, 'add_slurm_user', {
      channel_id: CHANNEL,
      cluster: 'hpc',
      public_key: ed25519PublicKey('b@shape'),
    });
    expect(end.state).toBe('failed');
    expect((end as { error: string }).error).toBe(
      "/gpu slurm adduser does not work with this cloud: its API cannot add Slurm users. Use the cloud's own console or CLI for it; /gpu help lists what works here.",
    );
    expect(await requestJobsInQueue(stack)).toEqual([]);
  });

  it('fails the step of a guest as /gpu refuses them, and runs nothing', async () => {
    const end = await stepResult(stack, GUEST, 'get_capacity', {});
    expect(end.state).toBe('failed');
    expect((end as { error: string }).error).toMatch(/^gpuops refused this step: .*guest/i);
    expect(await requestJobsInQueue(stack)).toEqual([]);
  });

  it('fails the step of someone the policy does not allow, naming the role it needs', async () => {
    await stack.cloud.createInstance({ name: 'team-box', type: 'h100-hgx-80gb.1x' });
    const end = await stepResult(stack, VIEWER, 'stop_instance', { instance: 'team-box' });
    expect(end.state).toBe('failed');
    expect((end as { error: string }).error).toMatch(
      /^gpuops refused this step: \/gpu stop needs the operator role, and you have viewer\./,
    );
    expect(await requestJobsInQueue(stack)).toEqual([]);
    const refusal = await until(
      async () =>
        (await stack.guardrails.audit.latest(20)).find((e) => e.actor === VIEWER && e.outcome === 'refused'),
      'the refusal on the audit trail',
    );
    expect(refusal.operation).toBe('stop');
    expect(refusal.parameters).toMatchObject({ step: 'stop_instance', needed: 'operator' });
  });
});

describe('a workflow step nobody approves in time, shape A', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({
      shape: 'A',
      policy: parsePolicy(`
roles:
  operator: { users: [${ADA}] }
approvals:
  always: [slurm.adduser]
  approvers: { users: [${BOB}] }
  expires_after: 1s
`),
      approvalExpiryEveryMs: 200,
      slack: { users: [{ id: ADA, name: 'ada', real_name: 'Ada Lovelace' }] },
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('fails at once a step that needs an approval but has no channel to show the card in', async () => {
    const end = await stepResult(stack, ADA, 'add_slurm_user', {
      cluster: 'slurm-1',
      public_key: ed25519PublicKey('quiet@hire'),
    });
    expect(end).toEqual({
      state: 'failed',
      error:
        'gpuops refused this step: This request needs an approval, and the step has no channel to show it in: give the step a channel for progress (approvers see the card there), or set approvals.channel in the gpuops policy.',
    });
    expect(await stack.guardrails.approvals.listPending({ limit: 10 })).toEqual([]);
  });

  it('fails the step when its approval expires, and adds no one', async () => {
    const end = await stepResult(stack, ADA, 'add_slurm_user', {
      channel_id: CHANNEL,
      cluster: 'slurm-1',
      public_key: ed25519PublicKey('late@hire'),
      username: 'late',
    });
    expect(end).toEqual({
      state: 'failed',
      error:
        '/gpu slurm adduser slurm-1 waited for an approver, and the approval expired before anyone decided. Nothing was changed; run the workflow again when an approver can answer.',
    });
    const cluster = (await stack.cloud.listSlurmClusters()).find((c) => c.name === 'slurm-1')!;
    expect(
      (await stack.cloud.listSlurmUsers({ clusterId: cluster.id })).map((u) => u.username),
    ).not.toContain('late');
  });
});

describe('the capacity step where the cloud counts free machines, shape C', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'C' });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('gives the number of free machines, for all types and for one', async () => {
    const listed = await stack.cloud.listCapacity({ projectId: stack.sim.info.projectId });
    const free = (name?: string) =>
      listed.filter((e) => name === undefined || e.name === name).reduce((n, e) => n + e.capacity, 0);
    const all = await stepResult(stack, ADA, 'get_capacity', {});
    expect(all).toMatchObject({
      state: 'completed',
      outputs: { machines_available: free(), types_available: listed.filter((e) => e.capacity > 0).length },
    });
    const one = listed.find((e) => e.capacity > 0)!;
    const only = await stepResult(stack, ADA, 'get_capacity', { instance_type: one.name });
    expect(only).toEqual({
      state: 'completed',
      outputs: {
        summary: `${one.name}: ${one.capacity} available`,
        types_available: 1,
        machines_available: free(one.name),
      },
    });
  });
});
