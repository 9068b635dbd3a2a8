import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gpuCommandSchema } from '../../../src/commands/registry.js';
import { readStepInputs } from '../../../src/commands/workflow/read-step-inputs.js';
import { STEPS } from '../../../src/commands/workflow/steps.js';

// Whatever a workflow passes a step (any JSON under any input name), the step either gets a command
// its schema accepts and acts as the person Slack filled in, or one sentence that names the input and
// says how to fix it: never a crash, never a stack trace or "[object Object]" for the workflow's author
// to read, and never a person taken from an input a builder can type.

const value = fc.oneof(
  fc.string(),
  fc.constantFrom('train-01', 'h100-hgx-80gb.1x', 'U0ADA', 'C0GPU', 'ssh-ed25519 AAAA', ''),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 2 }),
  fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }),
);

/** What Slack fills in as the person who used the workflow (or, sometimes, nothing). */
const person = fc.option(
  fc.record({
    id: fc.constantFrom('U0ADA', 'W0BOB'),
    secret: fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 1 }),
  }),
  { nil: undefined },
);

describe('a step’s inputs, whatever they are', () => {
  it.each(STEPS.map((s) => [s.callbackId, s] as const))(
    '%s: a checked command or one sentence',
    (_, step) => {
      const names = [...Object.keys(step.inputs), 'extra'];
      fc.assert(
        fc.property(fc.dictionary(fc.constantFrom(...names), value), person, (typed, filled) => {
          const inputs = filled === undefined ? typed : { ...typed, user_context: filled };
          const read = readStepInputs(step, inputs);
          if (read.ok) {
            expect(gpuCommandSchema.safeParse(read.command).success).toBe(true);
            // The person is the one Slack filled in, whatever else the inputs hold.
            expect(read.person).toBe(filled?.id);
            return;
          }
          expect(read.message).toMatch(/^The step(?:'s input| needs its input) "[a-z_]+"/);
          expect(read.message).toMatch(/Workflow Builder\.$/);
          expect(read.message).not.toMatch(/\[object|undefined|Error:|\n/);
        }),
        { numRuns: 300 },
      );
    },
  );
});
