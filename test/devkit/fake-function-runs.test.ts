import { LogLevel, type WebAPIPlatformError, WebClient } from '@slack/web-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stepFunction } from '../../src/commands/workflow/step-manifest.js';
import { FakeSlackApi, type FunctionDefinition } from '../../src/devkit/fake-slack-api.js';

// The fake's Workflow Builder: a step's run ends once, through the real WebClient, with Slack's
// answers for what a step must not do (end twice, end a run it never started, give outputs that do
// not fit the step's output parameters).

let fake: FakeSlackApi;
const client = (token: string) =>
  new WebClient(token, { slackApiUrl: fake.apiUrl, logLevel: LogLevel.ERROR, retryConfig: { retries: 0 } });
const stop = stepFunction('stop_instance') as unknown as FunctionDefinition;

async function slackError(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    return String((err as WebAPIPlatformError).data?.error ?? (err as Error).message);
  }
  throw new Error('expected the call to fail');
}

beforeEach(async () => {
  fake = await FakeSlackApi.start();
});
afterEach(async () => {
  await fake.close();
});

describe('fake Slack: custom step runs', () => {
  it('delivers a function_executed event with the step’s definition, inputs and a one-off token', () => {
    const { run, event } = fake.functionRuns.start('stop_instance', stop, { instance: 'a' }, 'U0ADA');
    expect(event).toMatchObject({
      type: 'function_executed',
      function_execution_id: run.executionId,
      workflow_execution_id: expect.stringMatching(/^Wx/),
      inputs: { instance: 'a', user_context: { id: 'U0ADA', secret: expect.any(String) } },
      function: { callback_id: 'stop_instance', title: 'Stop a GPU instance' },
    });
    expect(String(event.bot_access_token)).toMatch(/^xwfp-/);
    const inputs = (event.function as { input_parameters: { name: string }[] }).input_parameters;
    expect(inputs.map((p) => p.name)).toEqual(['user_context', 'channel_id', 'instance']);
  });

  it('fills the person who used the workflow over whatever a builder typed, and nobody without one', () => {
    const typed = { instance: 'a', user_context: { id: 'U0ROOT', secret: 'typed' } };
    const used = fake.functionRuns.start('stop_instance', stop, typed, 'U0VIEW').event.inputs as {
      user_context: { id: string; secret: string };
    };
    expect(used.user_context.id).toBe('U0VIEW');
    expect(used.user_context.secret).not.toBe('typed');
    const withInteraction: FunctionDefinition = {
      ...stop,
      input_parameters: { who: { type: 'slack#/types/interactivity', is_required: true } },
    };
    expect(fake.functionRuns.start('stop_instance', withInteraction, {}, 'U0ADA').event.inputs).toEqual({
      who: {
        interactivity_pointer: expect.any(String),
        interactor: { id: 'U0ADA', secret: expect.any(String) },
      },
    });
    expect(fake.functionRuns.start('stop_instance', stop, { instance: 'a' }).event.inputs).toEqual({
      instance: 'a',
    });
  });

  it('completes a run once; a second ending and an unknown run get Slack’s errors', async () => {
    const { run } = fake.functionRuns.start('stop_instance', stop, {});
    const outputs = { instance_name: 'a', instance_id: 'i-1', state: 'stopped' };
    await client('xoxb-test').functions.completeSuccess({ function_execution_id: run.executionId, outputs });
    await expect(fake.functionRuns.ended(run.executionId)).resolves.toEqual({ state: 'completed', outputs });
    expect(
      await slackError(
        client('xoxb-test').functions.completeError({ function_execution_id: run.executionId, error: 'x' }),
      ),
    ).toBe('execution_not_in_running_state');
    expect(
      await slackError(
        client('xoxb-test').functions.completeSuccess({ function_execution_id: 'Fx000', outputs: {} }),
      ),
    ).toBe('function_execution_not_found');
  });

  it('refuses outputs that do not fit the step’s output parameters, and the run goes on', async () => {
    const { run } = fake.functionRuns.start('stop_instance', stop, {});
    const wrong = client('xoxb-test').functions.completeSuccess({
      function_execution_id: run.executionId,
      outputs: { instance_name: 'a', state: 3 },
    });
    expect(await slackError(wrong)).toBe('parameter_validation_failed');
    expect(fake.functionRuns.runs.get(run.executionId)!.state).toBe('running');
  });

  it('takes the run’s token until the run ends, then no more; an error needs words', async () => {
    const { run } = fake.functionRuns.start('stop_instance', stop, {});
    const jit = client(run.token);
    expect(
      await slackError(jit.functions.completeError({ function_execution_id: run.executionId, error: ' ' })),
    ).toBe('invalid_arguments');
    await jit.functions.completeError({ function_execution_id: run.executionId, error: 'No such instance.' });
    await expect(fake.functionRuns.ended(run.executionId)).resolves.toEqual({
      state: 'failed',
      error: 'No such instance.',
    });
    expect(await slackError(jit.auth.test())).toBe('invalid_auth');
  });
});
