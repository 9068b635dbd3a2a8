import { open } from 'node:fs/promises';
import { resolve } from 'node:path';
import { DEMO_COMMAND } from '../cli-options/commands.js';
import { CliUsageError, optionSet, optionValue, parseCli, wholeNumber } from '../cli-options/options.js';
import { SHAPES, type Shape } from '../cloud/shape.js';
import { DEMO_BUDGET_USD } from './demo-policy.js';

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
  /** The demo budget's monthly amount, US dollars. */
  readonly budgetUsd: number;
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
  const budget = optionValue(parsed, '--budget');
  return {
    ...(script !== undefined ? { script } : {}),
    shape: shapeText as Shape,
    ...(files !== undefined ? { filesDir: resolve(files) } : {}),
    ...(log !== undefined ? { logFile: resolve(log) } : {}),
    metrics: !optionSet(parsed, '--no-metrics'),
    timeoutMs: timeout !== undefined ? wholeNumber('--timeout', timeout, 1, 3600) * 1000 : 120_000,
    transitionMs: transition !== undefined ? wholeNumber('--transition-ms', transition, 0, 600_000) : 2_000,
    budgetUsd: budget !== undefined ? wholeNumber('--budget', budget, 1, 10_000_000) : DEMO_BUDGET_USD,
  };
}

/**
 * Why `--script FILE` cannot be read, as the one sentence `gpuops demo` prints (undefined when it can
 * be): what is wrong with the file and what to give instead.
 */
export async function scriptFileProblem(file: string): Promise<string | undefined> {
  let why: string;
  try {
    const handle = await open(file, 'r');
    try {
      if (!(await handle.stat()).isDirectory()) return undefined;
      why = 'it is a folder';
    } finally {
      await handle.close();
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    why =
      code === 'ENOENT'
        ? 'there is no such file'
        : code === 'EACCES' || code === 'EPERM'
          ? 'you may not read it'
          : code === 'EISDIR'
            ? 'it is a folder'
            : `it cannot be opened (${code ?? 'unknown error'})`;
  }
  return `cannot read the script file ${file}: ${why}. Give a text file with one chat line per line (/gpu ls, /as bob, …), or --script - to read them from standard input.`;
}
