import type { StepParams } from './step-spec.js';
import { STEPS } from './steps.js';

// The manifest's `functions`, made from the steps (steps.ts), in the shape of Slack's published
// manifest schema and of `apps.manifest.export`: each callback_id maps to its title, description and
// parameters, each parameter list a map of name → type, title, description, is_required, hint.
// (Some of Slack's guides wrap the map in `{properties, required}`; the schema does not allow that.)

function parameters(params: StepParams): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(params).map(([name, p]) => [
      name,
      {
        type: p.type,
        title: p.title,
        description: p.description,
        is_required: p.required === true,
        ...(p.hint !== undefined ? { hint: p.hint } : {}),
      },
    ]),
  );
}

/** One step's function definition, as the manifest (and Slack's function_executed event) carry it. */
export function stepFunction(callbackId: string): Record<string, unknown> {
  const step = STEPS.find((s) => s.callbackId === callbackId);
  if (!step) throw new Error(`no workflow step ${callbackId}`);
  return {
    title: step.title,
    description: step.description,
    input_parameters: parameters(step.inputs),
    output_parameters: parameters(step.outputs),
  };
}

/** The manifest's `functions`: callback_id → definition, for every step. */
export function stepFunctions(): Record<string, Record<string, unknown>> {
  return Object.fromEntries(STEPS.map((s) => [s.callbackId, stepFunction(s.callbackId)]));
}
