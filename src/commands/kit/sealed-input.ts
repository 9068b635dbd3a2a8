import type { JobData, SealedInputs } from '../../jobs/job-data.js';
import type { Logger } from '../../log/logger.js';
import type { Sealer } from '../../store/sealed.js';
import { PermanentJobError } from './job-errors.js';
import type { JobRun } from './job-run.js';

// The worker's side of sealed form secrets: unseal one when a handler needs it, and discard them all
// once the job has ended (done, or failed for good), so a secret outlives its job by no more than that.

const WHAT: Readonly<Record<keyof SealedInputs, string>> = {
  userData: 'user data',
  kubeconfig: 'kubeconfig',
};

/**
 * The plaintext of a sealed input, or undefined when the request has none. A reference whose value is
 * gone (expired after a day, or sealed under a key since rotated) fails the job with what to do.
 */
export async function sealedInput(run: JobRun, field: keyof SealedInputs): Promise<string | undefined> {
  const ref = run.data.sealed?.[field];
  if (!ref) return undefined;
  const sealer = run.deps.sealer;
  const text = sealer ? await sealer.unseal(ref) : undefined;
  if (text === undefined) {
    throw new PermanentJobError(
      `The ${WHAT[field]} of this request is no longer available (sealed values last a day and do not survive a change of GPUOPS_SEAL_KEY or the bot token); send the form again.`,
    );
  }
  return text;
}

/** Deletes every sealed input of a job that has ended; a failure here is logged, never thrown. */
export async function discardSealed(data: JobData, sealer: Sealer | undefined, log: Logger): Promise<void> {
  if (!data.sealed || !sealer) return;
  for (const ref of Object.values(data.sealed)) {
    if (!ref) continue;
    await sealer.discard(ref).catch((err: unknown) => log.warn({ err }, 'could not discard a sealed input'));
  }
}
