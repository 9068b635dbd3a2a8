import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gpuCommandSchema } from '../../../src/commands/registry.js';
import { readStepInputs } from '../../../src/commands/workflow/read-step-inputs.js';
import { STEPS } from '../../../src/commands/workflow/steps.js';

// Whatever a workflow passes a step (any JSON under any input name), the step either gets a command
// its schema accepts, or one sentence that names the input and says how to fix it: never a crash,
// never a stack trace or "[object Object]" for the workflow's author to read.

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

describe('a step’s inputs, whatever they are', () => {
  it.each(STEPS.map((s) => [s.callbackId, s] as const))(
    '%s: a checked command or one sentence',
    (_, step) => {
      const names = [...Object.keys(step.inputs), 'extra'];
      fc.assert(
        fc.property(fc.dictionary(fc.constantFrom(...names), value), (inputs) => {
          const read = readStepInputs(step, inputs);
          if (read.ok) {
            expect(gpuCommandSchema.safeParse(read.command).success).toBe(true);
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
