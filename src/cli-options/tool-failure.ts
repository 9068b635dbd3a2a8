import { ConfigError } from '../config.js';
import { AppError } from '../errors.js';
import { redactText } from '../log/logger.js';

/**
 * How a command-line tool (`gpuops audit export`, `gpuops spend export`) ends on an error: one line on
 * stderr naming the tool, the setting to fix for a configuration mistake, never a secret; exit code 1.
 */
export function toolFailed(tool: string, err: unknown, stderr: { write(text: string): unknown }): number {
  if (err instanceof ConfigError) {
    stderr.write(`gpuops ${tool}: ${err.message}\nSee .env.example for every setting.\n`);
    return 1;
  }
  const message = err instanceof AppError ? err.message : redactText((err as Error)?.message ?? String(err));
  stderr.write(`gpuops ${tool}: ${message}\n`);
  return 1;
}
