import { z } from 'zod';
import { type GpuCommand, gpuCommandSchema } from '../registry.js';
import type { StepInputs, StepParam, StepParamType, StepSpec } from './step-spec.js';

// A step's inputs as Slack delivers them, checked twice: first each against the type the manifest
// declares (a wrong type is a mistake in the workflow), then the command they make against its own
// schema (the same rules as typed text). Either failure is one sentence for the workflow's author,
// and nothing is queued.

export type ReadStep =
  | { readonly ok: true; readonly inputs: StepInputs; readonly command: GpuCommand }
  | { readonly ok: false; readonly message: string };

const TYPE_WORDS: Readonly<Record<StepParamType, string>> = {
  string: 'text',
  integer: 'a whole number (integer)',
  boolean: 'true or false (boolean)',
  'slack#/types/user_id': 'a Slack user',
  'slack#/types/channel_id': 'a Slack channel',
};

const BASE: Readonly<Record<StepParamType, z.ZodType>> = {
  string: z.string().max(4000),
  integer: z.number().int(),
  boolean: z.boolean(),
  'slack#/types/user_id': z.string().regex(/^[UW][A-Z0-9]{2,}$/),
  'slack#/types/channel_id': z.string().regex(/^[CDG][A-Z0-9]{2,}$/),
};

/** Which input a field of the command comes from, where the names differ. */
const INPUT_OF_FIELD: Readonly<Record<string, string>> = {
  type: 'instance_type',
  publicKey: 'public_key',
};

function shownValue(value: unknown): string {
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 60 ? `${json.slice(0, 57)}…` : json;
}

function checkInput(name: string, param: StepParam, value: unknown): string | undefined {
  const empty = value === undefined || value === null || value === '';
  if (empty) {
    return param.required
      ? `The step needs its input "${name}" (${param.title}), and it was empty. Fill it in where the step is set up in Workflow Builder.`
      : undefined;
  }
  if (BASE[param.type].safeParse(value).success) return undefined;
  return `The step's input "${name}" (${param.title}) must be ${TYPE_WORDS[param.type]}, but it got ${shownValue(value)}. Pick a value of that type where the step is set up in Workflow Builder.`;
}

export function readStepInputs(step: StepSpec, raw: unknown): ReadStep {
  const given = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
  const inputs: Record<string, string | number | boolean | undefined> = {};
  for (const [name, param] of Object.entries(step.inputs)) {
    const value = given[name];
    const problem = checkInput(name, param, value);
    if (problem) return { ok: false, message: problem };
    if (value !== undefined && value !== null && value !== '')
      inputs[name] = value as string | number | boolean;
  }
  const checked = gpuCommandSchema.safeParse(step.command(inputs));
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const field = String(issue?.path[0] ?? '');
    const name = INPUT_OF_FIELD[field] ?? field;
    const value = inputs[name];
    return {
      ok: false,
      message: `The step's input "${name}"${value !== undefined ? ` (${shownValue(value)})` : ''} is not valid: ${issue?.message ?? 'it does not fit'}. Fix it where the step is set up in Workflow Builder.`,
    };
  }
  return { ok: true, inputs, command: checked.data };
}
