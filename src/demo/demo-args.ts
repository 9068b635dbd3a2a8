import { resolve } from 'node:path';
import { SHAPES, type Shape } from '../cloud/shape.js';

// `gpuops demo`'s options: what it takes, and the sentence for what it does not.

export const DEMO_USAGE = `Usage: gpuops demo [--script FILE] [--shape A|B|C] [--files DIR] [--log FILE]
                   [--no-metrics] [--timeout SECONDS] [--transition-ms N]

  --script FILE       read the chat's lines from FILE (- for standard input) instead of a prompt;
                      standard input that is not a terminal is read the same way
  --shape A|B|C       shape of the simulated cloud API (default B; Slurm users need A)
  --files DIR         keep files the bot uploads (metric charts) in DIR; default a temporary folder
                      removed at exit
  --log FILE          append the bot's JSON logs to FILE (level LOG_LEVEL, default info); without it,
                      errors go to standard error (LOG_LEVEL=warn for warnings too)
  --no-metrics        do not start Prometheus (/gpu metrics then says metrics are not configured)
  --timeout SECONDS   how long a script line may take to settle before it counts as failed (default 120)
  --transition-ms N   how long the simulated machines take to start, stop, create (default 2000)

Environment: REDIS_URL (a Redis of the demo's own; default a private redis-server), LOG_LEVEL, NO_COLOR.
See docs/demo.md.
`;

export interface DemoOptions {
  readonly script?: string;
  readonly shape: Shape;
  readonly filesDir?: string;
  readonly logFile?: string;
  readonly metrics: boolean;
  readonly timeoutMs: number;
  readonly transitionMs: number;
}

export class DemoUsageError extends Error {}

export function parseDemoArgs(args: readonly string[]): DemoOptions {
  let options: DemoOptions = { shape: 'B', metrics: true, timeoutMs: 120_000, transitionMs: 2_000 };
  for (let i = 0; i < args.length; i++) {
    const raw = args[i]!;
    const eq = raw.startsWith('--') ? raw.indexOf('=') : -1;
    const flag = eq > 0 ? raw.slice(0, eq) : raw;
    const value = (): string => {
      const v = eq > 0 ? raw.slice(eq + 1) : args[++i];
      if (v === undefined || v === '') throw new DemoUsageError(`${flag} needs a value.`);
      return v;
    };
    const whole = (min: number, max: number): number => {
      const v = value();
      if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
        throw new DemoUsageError(`${flag} must be a whole number from ${min} to ${max}; got "${v}".`);
      }
      return Number(v);
    };
    switch (flag) {
      case '--script':
        options = { ...options, script: value() };
        break;
      case '--shape': {
        const shape = value().toUpperCase();
        if (!(SHAPES as readonly string[]).includes(shape)) {
          throw new DemoUsageError(`--shape must be one of ${SHAPES.join(', ')}.`);
        }
        options = { ...options, shape: shape as Shape };
        break;
      }
      case '--files':
        options = { ...options, filesDir: resolve(value()) };
        break;
      case '--log':
        options = { ...options, logFile: resolve(value()) };
        break;
      case '--no-metrics':
        options = { ...options, metrics: false };
        break;
      case '--timeout':
        options = { ...options, timeoutMs: whole(1, 3600) * 1000 };
        break;
      case '--transition-ms':
        options = { ...options, transitionMs: whole(0, 600_000) };
        break;
      default:
        throw new DemoUsageError(`unknown option "${raw}".`);
    }
  }
  return options;
}
