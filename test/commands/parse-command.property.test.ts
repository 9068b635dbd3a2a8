import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatParseError } from '../../src/commands/help.js';
import { parseCommand } from '../../src/commands/parse-command.js';
import { gpuCommandSchema } from '../../src/commands/registry.js';
import { GPU_WORDS } from '../support/gpu-words.js';

// The grammar's words (from the specs) mixed with noise, so random input reaches every subcommand.
const VOCABULARY = [
  ...GPU_WORDS,
  'on',
  'off',
  '--range=6h',
  'train-01',
  'h100-hgx-80gb.8x',
  'v1.31',
  '1.31',
  '512Gi',
  '2',
  '0',
  '1001',
  '65',
  '6h',
  '31d',
  'team=ml',
  'a=',
  '"',
  "'",
  '“',
  '”',
  '‘',
  '’',
  '—',
  '<http://a.io|a.io>',
  '<@U1>',
  '&lt;',
  '&gt;',
  '&amp;',
  '<',
  '>',
  '|',
  '=',
  'ssh-ed25519',
  'AAAAC3NzaC1lZDI1NTE5AAAAIFuyvIwN8SVrspCLSMqeCCUbe1WBH+UgcwkB1g3duGfL',
  'up',
  'sum(rate(x[5m]))',
  '',
  ' ',
  '\t',
  '\n',
  '\u00a0',
];
const wordy = fc
  .array(fc.oneof(fc.constantFrom(...VOCABULARY), fc.string(), fc.string({ unit: 'grapheme' })), {
    maxLength: 12,
  })
  .map((words) => words.join(' '));
const anything = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
  wordy,
);

function checkResult(text: string): void {
  const result = parseCommand(text);
  if (result.ok) {
    // A command that reaches a job must survive the same schema the worker re-validates with.
    expect(gpuCommandSchema.parse(result.command)).toEqual(result.command);
    return;
  }
  const { message, usage, example, suggestion } = result.error;
  expect(message.trim().length).toBeGreaterThan(0);
  // The parser's own checks catch every bad value; the schema and catch-all are only a backstop.
  expect(message).not.toMatch(/cannot accept|could not be read/);
  expect(usage.trim().length).toBeGreaterThan(0);
  expect(example.startsWith('/gpu')).toBe(true);
  if (suggestion !== undefined) expect(suggestion.length).toBeGreaterThan(0);
  // What a person sees stays one Slack text block.
  expect(formatParseError(result.error).length).toBeLessThanOrEqual(3000);
}

describe('parseCommand on random text', () => {
  it('never throws and always answers a valid command or a complete error', () => {
    fc.assert(
      fc.property(anything, (text) => {
        checkResult(text);
      }),
      { numRuns: 5000 },
    );
  });

  it('parses the same way whatever surrounds the text with whitespace', () => {
    fc.assert(
      fc.property(wordy, fc.constantFrom('', ' ', '  \t', '\n'), (text, pad) => {
        expect(parseCommand(`${pad}${text}${pad}`)).toEqual(parseCommand(text));
      }),
      { numRuns: 1000 },
    );
  });

  it('reads any valid name back unchanged', () => {
    const name = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/);
    fc.assert(
      fc.property(name, fc.constantFrom('show', 'start', 'stop', 'rm'), (instance, verb) => {
        expect(parseCommand(`${verb} ${instance}`)).toEqual({ ok: true, command: { kind: verb, instance } });
      }),
      { numRuns: 1000 },
    );
  });
});
