import { describe, expect, it } from 'vitest';
import { readStepInputs } from '../../../src/commands/workflow/read-step-inputs.js';
import { defineStep, type StepSpec } from '../../../src/commands/workflow/step-spec.js';
import { stepFor } from '../../../src/commands/workflow/steps.js';

// Who a step acts as comes from the one input Slack fills in and a workflow's builder cannot type:
// the person who used the workflow (user_context) or who pressed its button (interactivity's
// interactor). Nothing a builder types, a user_id or a look-alike text, can stand in for it.

const stop = stepFor('stop_instance')!;
const ctx = (id: string) => ({ id, secret: 'a1b2' });

describe('the person a step acts as', () => {
  it('is the person in the user_context Slack filled in, not the user_id a builder typed', () => {
    const read = readStepInputs(stop, { user_id: 'U0ROOT', user_context: ctx('U0VIEW'), instance: 'a' });
    expect(read).toMatchObject({ ok: true, person: 'U0VIEW', command: { kind: 'stop', instance: 'a' } });
  });

  it('is nobody without a user_context from Slack, however the inputs name someone', () => {
    const sentence =
      'The step needs its input "user_context" (Person who used this workflow), and Slack gave no person in it: gpuops acts only as the person Slack fills in, never one typed into the step. Start the workflow from a link, a shortcut or a button (or put a step with a button before this one), or add the step again in Workflow Builder.';
    for (const user_context of [undefined, 'U0ROOT', { id: 'U0ROOT' }, { id: 'root', secret: 'x' }, null]) {
      expect(readStepInputs(stop, { user_id: 'U0ROOT', user_context, instance: 'a' })).toEqual({
        ok: false,
        message: sentence,
      });
    }
  });

  it('is the interactor of an interactivity input, for a step that declares one', () => {
    const pressed: StepSpec = defineStep({
      ...stop,
      inputs: {
        instance: stop.inputs.instance!,
        pressed_by: {
          type: 'slack#/types/interactivity',
          title: 'Who pressed the button',
          description: 'Filled in by Slack.',
          required: true,
        },
      },
    });
    const { user_context: _, ...inputs } = pressed.inputs;
    const onlyInteraction: StepSpec = { ...pressed, inputs };
    const read = readStepInputs(onlyInteraction, {
      instance: 'a',
      pressed_by: { interactivity_pointer: 'I0P', interactor: ctx('U0ADA') },
    });
    expect(read).toMatchObject({ ok: true, person: 'U0ADA' });
    expect(
      readStepInputs(onlyInteraction, { instance: 'a', pressed_by: { interactor: ctx('U0ADA') } }),
    ).toMatchObject({
      ok: false,
    });
  });
});
