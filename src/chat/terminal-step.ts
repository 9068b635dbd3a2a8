import { randomBytes } from 'node:crypto';
import { stepFunction } from '../commands/workflow/step-manifest.js';
import { CHANNEL_INPUT, isSlackFilled, type StepSpec } from '../commands/workflow/step-spec.js';
import { STEPS, stepFor } from '../commands/workflow/steps.js';
import type { FunctionDefinition, FunctionEnd } from '../devkit/fake-slack-api.js';
import type { LocalSlackApi } from './local-slack-api.js';
import type { TerminalStyle } from './render-terminal.js';
import type { Actor, TerminalReceiver } from './terminal-receiver.js';

// `/step <callback_id> name=value…` in the demo's chat: what Workflow Builder does when a workflow
// reaches a gpuops step. The local Slack starts the run and its function_executed event goes to the
// bot through the terminal receiver, as Slack's Events API would deliver it; the chat then shows the
// step's outputs, or the error the workflow's author would see. The local Slack fills the person who
// used the workflow with you, as Slack does (no input typed here can change who acts); the channel
// defaults to where you are; a value is read as JSON when it is one (42, true, "007", "two words"),
// else as text.

export interface StepChat {
  readonly slack: LocalSlackApi;
  readonly receiver: TerminalReceiver;
  readonly style: TerminalStyle;
  readonly actor: Actor;
  readonly say: (...lines: string[]) => void;
}

export const STEP_USAGE = `Say which step and its inputs, e.g. /step stop_instance instance=train-01. The steps: ${STEPS.map((s) => s.callbackId).join(', ')}.`;

function typedValue(text: string): unknown {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' ? text : parsed;
  } catch {
    return text;
  }
}

/** The inputs a person can type: every input but the ones Slack fills in (the person who acts). */
function typedInputs(step: StepSpec): string[] {
  return Object.entries(step.inputs)
    .filter(([, param]) => !isSlackFilled(param.type))
    .map(([name]) => name);
}

/** How to give the step's required inputs on the line, e.g. `/step stop_instance instance=…`. */
function exampleLine(step: StepSpec): string {
  const shown = typedInputs(step).filter((n) => n !== CHANNEL_INPUT && step.inputs[n]?.required);
  return `/step ${step.callbackId}${shown.map((n) => ` ${n}=…`).join('')}`;
}

/** The inputs typed after the step's name, with the channel filled in from where you are. */
export function stepInputs(
  step: StepSpec,
  words: readonly string[],
  actor: Actor,
): Record<string, unknown> | string {
  const inputs: Record<string, unknown> = {};
  if (CHANNEL_INPUT in step.inputs) inputs[CHANNEL_INPUT] = actor.channelId;
  for (const word of words) {
    const at = word.indexOf('=');
    if (at <= 0)
      return `"${word}" is not name=value: give each input as name=value, such as instance=train-01; the inputs of ${step.callbackId} are ${typedInputs(step).join(', ')}.`;
    const name = word.slice(0, at);
    if (!typedInputs(step).includes(name))
      return `${step.callbackId} has no input "${name}"; its inputs are ${typedInputs(step).join(', ')}: ${exampleLine(step)}.`;
    const value = word.slice(at + 1);
    if (value === '') delete inputs[name];
    else inputs[name] = typedValue(value);
  }
  return inputs;
}

/** The event delivery Slack makes for one step run (an Events API event_callback). */
function eventBody(actor: Actor, event: Record<string, unknown>): Record<string, unknown> {
  return {
    token: 'demo',
    team_id: actor.teamId,
    api_app_id: 'A0DEMO',
    event,
    type: 'event_callback',
    event_id: `Ev${randomBytes(5).toString('hex').toUpperCase()}`,
    event_time: Math.floor(Date.now() / 1000),
  };
}

/** How a step ended, as lines for the terminal. */
export function endLines(callbackId: string, end: FunctionEnd, style: TerminalStyle): string[] {
  if (end.state === 'failed')
    return [style.bold(`Workflow step ${callbackId} failed:`), `  ${end.error}`, ''];
  // A value of several lines (get_capacity's summary) keeps the indent on each.
  const outputs = Object.entries(end.outputs).map(
    ([name, value]) => `  ${name}: ${String(value).replace(/\n/g, '\n    ')}`,
  );
  return [style.bold(`Workflow step ${callbackId} completed:`), ...outputs, ''];
}

/** Starts a step run and delivers its event; resolves with the run's id, or why it did not start. */
export async function startStep(
  chat: StepChat,
  line: string,
): Promise<{ executionId: string; callbackId: string } | { failed: string }> {
  // name="a value with spaces" stays one word (an SSH key has spaces).
  const [name = '', ...words] = line.match(/[^\s"=]+="(?:[^"\\]|\\.)*"|\S+/g) ?? [];
  const step = stepFor(name);
  if (!step) {
    chat.say(name === '' ? STEP_USAGE : `There is no step ${name}. ${STEP_USAGE}`);
    return { failed: name === '' ? 'no step given' : `no step ${name}` };
  }
  const inputs = stepInputs(step, words, chat.actor);
  if (typeof inputs === 'string') {
    chat.say(inputs);
    return { failed: inputs };
  }
  const definition = stepFunction(step.callbackId) as unknown as FunctionDefinition;
  const { run, event } = chat.slack.functionRuns.start(
    step.callbackId,
    definition,
    inputs,
    chat.actor.userId,
  );
  chat.say(chat.style.dim(`A workflow runs the step ${step.callbackId} for @${chat.actor.userName}…`));
  await chat.receiver.deliver(eventBody(chat.actor, event));
  return { executionId: run.executionId, callbackId: step.callbackId };
}

/**
 * After the step's jobs settled: its outputs or error now, or, while it waits for an approver, a
 * note and the outcome later, when it ends.
 */
export function reportStep(
  chat: StepChat,
  run: { executionId: string; callbackId: string },
): { failed?: string } {
  const current = chat.slack.functionRuns.runs.get(run.executionId);
  if (current?.state === 'running') {
    chat.say(
      chat.style.dim(
        `The step ${run.callbackId} is still running (waiting for an approver?); its outcome follows when it ends.`,
      ),
    );
    chat.slack.functionRuns
      .ended(run.executionId, 24 * 3600_000)
      .then((end) => chat.say(...endLines(run.callbackId, end, chat.style)))
      .catch(() => {});
    return {};
  }
  if (current?.state === 'completed') {
    chat.say(...endLines(run.callbackId, { state: 'completed', outputs: current.outputs ?? {} }, chat.style));
    return {};
  }
  const error = current?.error ?? 'the step did not start';
  const lines = endLines(run.callbackId, { state: 'failed', error }, chat.style);
  // The author's answer says where Workflow Builder sets an input; in this chat it goes on the line.
  const step = stepFor(run.callbackId);
  if (step && /needs its input "[^"]+" \([^)]*\), and it was empty/.test(error)) {
    lines.splice(-1, 0, chat.style.dim(`  In this chat, give it on the line: ${exampleLine(step)}`));
  }
  chat.say(...lines);
  return { failed: error };
}
