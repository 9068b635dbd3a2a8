import { commandPath, SPECS_IN_HELP_ORDER } from '../../src/commands/registry.js';

// The words fuzzers mix with noise so random text reaches deep into every subcommand: taken from the
// specs, so a subcommand or flag added later is fuzzed too.

/** Every word of every subcommand's path and every `--flag` its usage names, once each, in help order. */
export const GPU_WORDS: readonly string[] = [
  ...new Set(
    SPECS_IN_HELP_ORDER.flatMap((s) => [
      ...commandPath(s.kind).split(' '),
      ...(s.usage.match(/--[a-z][\w-]*/g) ?? []),
    ]),
  ),
];
