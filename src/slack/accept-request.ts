import type { GpuCommand } from '../command/command-schema.js';
import type { JobContext, SealedInputs } from '../jobs/job-data.js';
import { type EnqueueDeps, type EnqueueResult, enqueueRequest } from './enqueue-request.js';

/** What became of a request a person made, from any entry point (command, form, button). */
export type AcceptResult = EnqueueResult;

/**
 * The one door every request goes through, whatever it came from: the typed command, a form, or a
 * button on a message (idle alerts, the waitlist). The guardrails live here, so no entry point can
 * bypass them.
 */
export async function acceptRequest(
  deps: EnqueueDeps,
  command: GpuCommand,
  ctx: JobContext,
  extra: { readonly sealed?: SealedInputs } = {},
): Promise<AcceptResult> {
  return enqueueRequest(deps, command, ctx, extra);
}
