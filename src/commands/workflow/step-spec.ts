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
} as const;
export type StepParamType = keyof typeof STEP_PARAM_TYPES;

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

/** A step's inputs as they arrived, after their declared types were checked. */
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

/** Who the step acts for: every step has it, and the policy checks their role. */
export const USER_INPUT = 'user_id';
/** Where the step's progress message goes, for steps that show progress. */
export const CHANNEL_INPUT = 'channel_id';

const userParam: StepParam = {
  type: 'slack#/types/user_id',
  title: 'Person',
  description:
    'Who this request is for: gpuops checks their role in its policy and names them in messages. Usually "Person who used this workflow".',
  required: true,
};

const channelParam: StepParam = {
  type: 'slack#/types/channel_id',
  title: 'Channel for progress',
  description:
    'Where gpuops shows the request as it moves (and the approval wait, if any). Leave empty to post nothing: the outputs are the answer.',
};

/** A step with the inputs every step has: the person, and the progress channel where it applies. */
export function defineStep(spec: StepSpec): StepSpec {
  return {
    ...spec,
    inputs: {
      [USER_INPUT]: userParam,
      ...(spec.showsProgress ? { [CHANNEL_INPUT]: channelParam } : {}),
      ...spec.inputs,
    },
  };
}
