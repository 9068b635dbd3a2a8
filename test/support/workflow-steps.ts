import { stepFunction } from '../../src/commands/workflow/step-manifest.js';
import type { FunctionDefinition, FunctionEnd } from '../../src/devkit/fake-slack-api.js';
import { type BotStack, SIGNING_SECRET } from './bot-stack.js';
import { eventCallbackBody, postSigned, type SignedResponse } from './slack-driver.js';

// Workflow Builder toward the bot: a person uses a workflow and it reaches a gpuops step (the fake
// Slack starts the run, fills the step's Slack-filled inputs with that person as Slack does, and gives
// the function_executed event), the event is delivered over HTTP, signed as Slack signs it, and the
// test waits for the functions.completeSuccess or completeError call that ends the run.

export interface StepRun {
  readonly executionId: string;
  /** The run of the whole workflow, as the event names it. */
  readonly workflowExecutionId: string;
  /** Bolt's answer to the event delivery. */
  readonly response: SignedResponse;
  /** How the run ended: its outputs, or the error Workflow Builder shows. */
  ended(timeoutMs?: number): Promise<FunctionEnd>;
  /** Delivers the same event again, marked as a retry, as Slack does when an answer was late. */
  redeliver(): Promise<SignedResponse>;
}

/**
 * Runs a step as `person` used the workflow: Slack fills the step's person with them, whatever the
 * builder's `inputs` say (a `user_id` or `user_context` among them is what a builder could type).
 * `person` undefined: Slack fills in no one.
 */
export async function runStep(
  stack: BotStack,
  person: string | undefined,
  callbackId: string,
  inputs: Readonly<Record<string, unknown>>,
): Promise<StepRun> {
  const definition = stepFunction(callbackId) as unknown as FunctionDefinition;
  const { run, event } = stack.slack.functionRuns.start(callbackId, definition, { ...inputs }, person);
  const body = eventCallbackBody(event);
  const response = await postSigned(stack.url, body, { secret: SIGNING_SECRET });
  return {
    executionId: run.executionId,
    workflowExecutionId: String(event.workflow_execution_id),
    response,
    redeliver: () => postSigned(stack.url, body, { secret: SIGNING_SECRET, retryNum: 1 }),
    ended: (timeoutMs = 20_000) => stack.slack.functionRuns.ended(run.executionId, timeoutMs),
  };
}

/** Runs a step as `person` used the workflow, and waits for it to end. */
export async function stepResult(
  stack: BotStack,
  person: string | undefined,
  callbackId: string,
  inputs: Readonly<Record<string, unknown>>,
): Promise<FunctionEnd> {
  const run = await runStep(stack, person, callbackId, inputs);
  if (run.response.status !== 200) throw new Error(`the event delivery got ${run.response.status}`);
  return run.ended();
}
