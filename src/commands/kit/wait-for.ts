import { setTimeout as sleep } from 'node:timers/promises';
import { PermanentJobError } from './job-errors.js';
import type { JobRun } from './job-run.js';

export interface WaitOptions<T> {
  /** Reads the resource now; undefined means it is gone. */
  readonly read: () => Promise<T | undefined>;
  /** Done when this returns true. */
  readonly done: (value: T | undefined) => boolean;
  /** A state that will not settle (error, out-of-stock): the reason, or null. */
  readonly failed?: (value: T | undefined) => string | null;
  /** A short line for the message while waiting, e.g. "state: creating". */
  readonly describe: (value: T | undefined) => string;
  /** What we are waiting for, for the timeout message. */
  readonly goal: string;
}

/**
 * Polls until the resource settles (the API has no events), with doubling waits, editing the message
 * only when what it would say changes. Ends permanently on a failed state or after the settle timeout.
 */
export async function waitFor<T>(run: JobRun, options: WaitOptions<T>): Promise<T | undefined> {
  const deadline = run.now() + run.timing.settleTimeoutMs;
  let delay = run.timing.pollStartMs;
  let shown = '';
  for (;;) {
    const value = await options.read();
    if (options.done(value)) return value;
    const failure = options.failed?.(value);
    if (failure) throw new PermanentJobError(failure);
    const line = options.describe(value);
    if (line !== shown) {
      shown = line;
      await run.update('waiting', `Waiting for ${options.goal} (${line}).`);
    }
    if (run.now() >= deadline) {
      throw new PermanentJobError(
        `Gave up waiting for ${options.goal} after ${Math.round(run.timing.settleTimeoutMs / 60_000)} min (${line}); check it with /gpu show and try again.`,
      );
    }
    await sleep(delay, undefined, { signal: run.signal });
    delay = Math.min(delay * 2, run.timing.pollMaxMs);
  }
}
