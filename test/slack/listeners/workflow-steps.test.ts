import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stepFunction } from '../../../src/commands/workflow/step-manifest.js';
import type { FunctionDefinition, FunctionRun } from '../../../src/devkit/fake-slack-api.js';
import { registerWorkflowSteps, STEP_NOT_QUEUED } from '../../../src/slack/listeners/workflow-steps.js';
import {
  expectCleanSlack,
  type ListenerStack,
  policyOf,
  startListenerStack,
  withRedisGone,
} from '../../support/listener-stack.js';

// Workflow Builder steps (src/slack/listeners/workflow-steps.ts) alone: a `function_executed` event,
// signed and delivered over HTTP, becomes one job that carries the step's ids (never its token), or
// the run is failed at once with one sentence. Ada operates; Carol may only look; Gus is a guest.

const POLICY = policyOf('steps.yaml', 'default_role: viewer', 'roles:', '  operator: { users: [U0ADA] }');

describe('the Workflow Builder steps', () => {
  let stack: ListenerStack;
  beforeAll(async () => {
    stack = await startListenerStack(registerWorkflowSteps, {
      policy: POLICY,
      slack: {
        users: [
          { id: 'U0ADA', name: 'ada' },
          { id: 'U0CAROL', name: 'carol' },
          { id: 'U0GUS', name: 'gus', is_restricted: true },
        ],
      },
    });
    await stack.machines('train-01', 'train-02');
  });
  afterAll(async () => {
    expectCleanSlack(stack);
    await stack?.close();
  });

  /**
   * Starts a run of the step in the fake as `person` used the workflow (Slack fills the step's person
   * with them) and delivers its event; returns the run's id and token.
   */
  async function runStep(
    person: string | undefined,
    callbackId: string,
    inputs: Record<string, unknown>,
    deliveries = 1,
  ) {
    const definition = stepFunction(callbackId) as unknown as FunctionDefinition;
    const { run, event } = stack.slack.functionRuns.start(callbackId, definition, { ...inputs }, person);
    for (let n = 0; n < deliveries; n++) {
      expect((await stack.event(event, n === 0 ? undefined : n)).status).toBe(200);
    }
    return run;
  }

  /** Why the run failed, if it did: the listener fails a step that never became a job at once. */
  const failure = (run: FunctionRun) => (run.state === 'failed' ? run.error : undefined);

  it('queues one job for a step Slack delivers twice, carrying the step’s ids and not its token', async () => {
    const run = await runStep('U0ADA', 'stop_instance', { instance: 'train-01', channel_id: 'C0GPU' }, 2);
    const jobs = await stack.jobs();
    expect(jobs).toHaveLength(1);
    const data = jobs[0]!.data;
    expect(data.command).toEqual({ kind: 'stop', instance: 'train-01' });
    expect(data.ctx).toMatchObject({
      userId: 'U0ADA',
      channelId: 'C0GPU',
      step: {
        executionId: run.executionId,
        workflowExecutionId: expect.stringMatching(/^Wx/),
        callbackId: 'stop_instance',
        quiet: false,
      },
    });
    expect(JSON.stringify(data)).not.toContain(run.token);
    // The job ends the run; the listener has not.
    expect(run.state).toBe('running');
  });

  it('runs a step given no channel quietly, as the person, where only its outputs answer', async () => {
    const run = await runStep('U0ADA', 'stop_instance', { instance: 'train-02' });
    const [job] = (await stack.jobs()).filter((j) => j.data.ctx.step?.executionId === run.executionId);
    expect(job?.data.command).toEqual({ kind: 'stop', instance: 'train-02' });
    expect(job?.data.ctx).toMatchObject({ userId: 'U0ADA', channelId: 'U0ADA', step: { quiet: true } });
  });

  it('fails a step that needs an approval but has no channel to show the card in', async () => {
    // A start of an H100 machine costs more than the $10/h that needs no approval.
    const run = await runStep('U0ADA', 'start_instance', { instance: 'train-01' });
    expect(failure(run)).toBe(
      'gpuops refused this step: This request needs an approval, and the step has no channel to show it in: give the step a channel for progress (approvers see the card there), or set approvals.channel in the gpuops policy.',
    );
    expect(await stack.guardrails.approvals.listPending()).toEqual([]);
  });

  it('fails a step given a wrong input with one sentence, with the run’s own token, and queues nothing', async () => {
    const before = (await stack.jobs()).length;
    const since = stack.slack.mark();
    const wrong = await runStep('U0ADA', 'stop_instance', { instance: 42 });
    expect(failure(wrong)).toBe(
      'The step\'s input "instance" (Instance) must be text, but it got 42. Pick a value of that type where the step is set up in Workflow Builder.',
    );
    const noUser = await runStep(undefined, 'stop_instance', { user_id: 'U0ADA', instance: 'train-01' });
    expect(failure(noUser)).toContain(
      'needs its input "user_context" (Person who used this workflow), and Slack gave no person in it',
    );
    const ends = stack.slack.calls.slice(since).filter((c) => c.method === 'functions.completeError');
    expect(ends.map((c) => c.token)).toEqual([wrong.token, noUser.token]);
    expect(await stack.jobs()).toHaveLength(before);
  });

  it('fails the step of someone the policy does not allow, and of a guest, as /gpu refuses them', async () => {
    const before = (await stack.jobs()).length;
    const viewer = await runStep('U0CAROL', 'stop_instance', { instance: 'train-01' });
    expect(failure(viewer)).toMatch(
      /^gpuops refused this step: \/gpu stop needs the operator role, and you have viewer\./,
    );
    const guest = await runStep('U0GUS', 'stop_instance', { instance: 'train-01' });
    expect(failure(guest)).toMatch(/^gpuops refused this step: .*guest/i);
    expect(await stack.jobs()).toHaveLength(before);
  });

  it('fails a step this cloud cannot run, saying so, and queues nothing', async () => {
    const before = (await stack.jobs()).length;
    const run = await runStep('U0ADA', 'add_slurm_user', {
      cluster: 'slurm-1',
      username: 'ada',
      public_key:
        'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFuyvIwN8SVrspCLSMqeCCUbe1WBH+UgcwkB1g3duGfL ada@laptop',
    });
    expect(failure(run)).toBe(
      "/gpu slurm adduser does not work with this cloud: its API cannot add Slurm users. Use the cloud's own console or CLI for it; /gpu help lists what works here.",
    );
    expect(await stack.jobs()).toHaveLength(before);
  });
});

describe('the Workflow Builder steps, Redis gone', () => {
  it('fails the run saying nothing was started', async () => {
    await withRedisGone(registerWorkflowSteps, { policy: POLICY }, async (stack) => {
      const definition = stepFunction('stop_instance') as unknown as FunctionDefinition;
      const { run, event } = stack.slack.functionRuns.start(
        'stop_instance',
        definition,
        { instance: 'train-01' },
        'U0ADA',
      );
      await stack.event(event);
      expect(run).toMatchObject({ state: 'failed', error: STEP_NOT_QUEUED });
    });
  });
});
