import type { GpuCommand } from '../registry.js';

// What a Workflow Builder custom step is, once, in code: its callback_id, its typed inputs and
// outputs (which become the manifest's `functions`), the /gpu command it runs, and how the job's
// outcome becomes its outputs. docs/workflows.md.

/** The Slack parameter types gpuops steps use, and the JSON value each arrives as. */
export const STEP_PARAM_TYPES = {
  string: 'string',
  integer: 'number',
  boolean: 'boolean',
  'slack#/types/user_id': 'string',
  'slack#/types/channel_id': 'string',
  'slack#/types/user_context': 'object',
  'slack#/types/interactivity': 'object',
} as const;
export type StepParamType = keyof typeof STEP_PARAM_TYPES;

/**
 * The types whose value Slack fills in and a workflow's builder cannot type: the person who used the
 * workflow (`user_context`, `{id, secret}`), or who pressed a button or submitted a form in it
 * (`interactivity`, whose `interactor` is such a context). The only source of who a step acts as.
 */
export const SLACK_FILLED_TYPES = ['slack#/types/user_context', 'slack#/types/interactivity'] as const;
export type SlackFilledType = (typeof SLACK_FILLED_TYPES)[number];

export function isSlackFilled(type: StepParamType): type is SlackFilledType {
  return (SLACK_FILLED_TYPES as readonly string[]).includes(type);
}

export interface StepParam {
  readonly type: StepParamType;
  /** The label Workflow Builder shows. */
  readonly title: string;
  /** One sentence under the label. */
  readonly description: string;
  readonly required?: boolean;
  /** Placeholder text in Workflow Builder's input field. */
  readonly hint?: string;
}

export type StepParams = Readonly<Record<string, StepParam>>;

/** A step's inputs as they arrived, after their declared types were checked (the person is apart). */
export type StepInputs = Readonly<Record<string, string | number | boolean | undefined>>;

/** A step's outputs, each of its declared type. */
export type StepOutputs = Readonly<Record<string, string | number | boolean>>;

/** Why the step cannot give its outputs: one sentence for the workflow's author. */
export class StepOutputError extends Error {}

export interface StepSpec {
  /** The function's callback_id, in the manifest and in Bolt's app.function(). Never renamed. */
  readonly callbackId: string;
  readonly title: string;
  readonly description: string;
  readonly inputs: StepParams;
  readonly outputs: StepParams;
  /** Whether the step takes a channel to show its progress in (private answers do not). */
  readonly showsProgress: boolean;
  /** Inputs `outputsOf` needs besides the outcome: kept with the job (never a secret). */
  readonly keeps?: readonly string[];
  /** The /gpu command the inputs ask for; the command's own schema checks it afterwards. */
  readonly command: (inputs: StepInputs) => GpuCommand;
  /**
   * The outputs, from the job's outcome data (Outcome.outputs) and the inputs; throws
   * StepOutputError with a sentence when they cannot be given.
   */
  readonly outputsOf: (data: Readonly<Record<string, unknown>>, inputs: StepInputs) => StepOutputs;
}

/**
 * Who the step acts as: every step has it, Slack fills it with the person who used the workflow
 * (Workflow Builder shows no field for it), and the policy checks their role.
 */
export const PERSON_INPUT = 'user_context';
/** Where the step's progress message goes, for steps that show progress. */
export const CHANNEL_INPUT = 'channel_id';

const personParam: StepParam = {
  type: 'slack#/types/user_context',
  title: 'Person who used this workflow',
  description:
    'Filled in by Slack, never typed: gpuops acts as this person, checks their role in its policy and names them in messages.',
  required: true,
};

const channelParam: StepParam = {
  type: 'slack#/types/channel_id',
  title: 'Channel for progress',
  description:
    'Where gpuops shows the request as it moves (and the approval wait, if any); a role the policy grants to this channel does not apply to steps. Leave empty to post nothing: the outputs are the answer.',
};

/** A step with the inputs every step has: the person, and the progress channel where it applies. */
export function defineStep(spec: StepSpec): StepSpec {
  return {
    ...spec,
    inputs: {
      [PERSON_INPUT]: personParam,
      ...(spec.showsProgress ? { [CHANNEL_INPUT]: channelParam } : {}),
      ...spec.inputs,
    },
  };
}
