import { z } from 'zod';
import { type GpuCommand, gpuCommandSchema } from '../registry.js';
import {
  isSlackFilled,
  type SlackFilledType,
  type StepInputs,
  type StepParam,
  type StepParamType,
  type StepSpec,
} from './step-spec.js';

// A step's inputs as Slack delivers them, checked twice: first each against the type the manifest
// declares (a wrong type is a mistake in the workflow), then the command they make against its own
// schema (the same rules as typed text). Either failure is one sentence for the workflow's author,
// and nothing is queued. Who the step acts as comes only from the input Slack fills in (the person
// who used the workflow), never from one a builder can type.

export type ReadStep =
  | {
      readonly ok: true;
      /** The inputs the workflow's builder set, which make the command. */
      readonly inputs: StepInputs;
      readonly command: GpuCommand;
      /** The Slack user the step acts as, from its Slack-filled input. */
      readonly person: string;
    }
  | { readonly ok: false; readonly message: string };

type TypedParam = Exclude<StepParamType, SlackFilledType>;

const TYPE_WORDS: Readonly<Record<TypedParam, string>> = {
  string: 'text',
  integer: 'a whole number (integer)',
  boolean: 'true or false (boolean)',
  'slack#/types/user_id': 'a Slack user',
  'slack#/types/channel_id': 'a Slack channel',
};

const BASE: Readonly<Record<TypedParam, z.ZodType>> = {
  string: z.string().max(4000),
  integer: z.number().int(),
  boolean: z.boolean(),
  'slack#/types/user_id': z.string().regex(/^[UW][A-Z0-9]{2,}$/),
  'slack#/types/channel_id': z.string().regex(/^[CDG][A-Z0-9]{2,}$/),
};

const userContext = z.object({ id: z.string().regex(/^[UW][A-Z0-9]{2,}$/), secret: z.string().min(1) });

/** The person in a Slack-filled value: a user_context's id, or an interactivity's interactor. */
const PERSON_IN: Readonly<Record<SlackFilledType, z.ZodType<string>>> = {
  'slack#/types/user_context': userContext.transform((c) => c.id),
  'slack#/types/interactivity': z
    .object({ interactivity_pointer: z.string().min(1), interactor: userContext })
    .transform((i) => i.interactor.id),
};

function noPerson(name: string, param: StepParam): string {
  return `The step needs its input "${name}" (${param.title}), and Slack gave no person in it: gpuops acts only as the person Slack fills in, never one typed into the step. Start the workflow from a link, a shortcut or a button (or put a step with a button before this one), or add the step again in Workflow Builder.`;
}

/** Which input a field of the command comes from, where the names differ. */
const INPUT_OF_FIELD: Readonly<Record<string, string>> = {
  type: 'instance_type',
  publicKey: 'public_key',
};

function shownValue(value: unknown): string {
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 60 ? `${json.slice(0, 57)}…` : json;
}

function checkInput(
  name: string,
  param: StepParam & { type: TypedParam },
  value: unknown,
): string | undefined {
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
  let person: string | undefined;
  for (const [name, param] of Object.entries(step.inputs)) {
    const value = given[name];
    if (isSlackFilled(param.type)) {
      const read = PERSON_IN[param.type].safeParse(value);
      if (!read.success) return { ok: false, message: noPerson(name, param) };
      person ??= read.data;
      continue;
    }
    const problem = checkInput(name, param as StepParam & { type: TypedParam }, value);
    if (problem) return { ok: false, message: problem };
    if (value !== undefined && value !== null && value !== '')
      inputs[name] = value as string | number | boolean;
  }
  if (person === undefined) {
    return {
      ok: false,
      message: `The step ${step.callbackId} declares no input Slack fills with a person, so gpuops acts for no one. Update gpuops, then add the step again in Workflow Builder.`,
    };
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
  return { ok: true, inputs, command: checked.data, person };
}
