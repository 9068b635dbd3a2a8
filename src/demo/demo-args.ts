import { resolve } from 'node:path';
import { DEMO_COMMAND } from '../cli-options/commands.js';
import { CliUsageError, optionSet, optionValue, parseCli, wholeNumber } from '../cli-options/options.js';
import { SHAPES, type Shape } from '../cloud/shape.js';

// `gpuops demo`'s options, read from its table (DEMO_COMMAND in src/cli-options/commands.ts): what it takes,
// and the sentence for what it does not.

export interface DemoOptions {
  readonly script?: string;
  readonly shape: Shape;
  readonly filesDir?: string;
  readonly logFile?: string;
  readonly metrics: boolean;
  readonly timeoutMs: number;
  readonly transitionMs: number;
}

/** Parses `gpuops demo`'s arguments, or 'help'; throws CliUsageError with a sentence a person can act on. */
export function parseDemoArgs(args: readonly string[]): DemoOptions | 'help' {
  const parsed = parseCli(DEMO_COMMAND, args);
  if (parsed.help) return 'help';
  const script = optionValue(parsed, '--script');
  const shapeText = optionValue(parsed, '--shape')?.toUpperCase() ?? 'B';
  if (!(SHAPES as readonly string[]).includes(shapeText)) {
    throw new CliUsageError(`--shape must be one of ${SHAPES.join(', ')}.`);
  }
  const files = optionValue(parsed, '--files');
  const log = optionValue(parsed, '--log');
  const timeout = optionValue(parsed, '--timeout');
  const transition = optionValue(parsed, '--transition-ms');
  return {
    ...(script !== undefined ? { script } : {}),
    shape: shapeText as Shape,
    ...(files !== undefined ? { filesDir: resolve(files) } : {}),
    ...(log !== undefined ? { logFile: resolve(log) } : {}),
    metrics: !optionSet(parsed, '--no-metrics'),
    timeoutMs: timeout !== undefined ? wholeNumber('--timeout', timeout, 1, 3600) * 1000 : 120_000,
    transitionMs: transition !== undefined ? wholeNumber('--transition-ms', transition, 0, 600_000) : 2_000,
  };
}
