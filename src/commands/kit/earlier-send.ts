import { setTimeout as sleep } from 'node:timers/promises';
import { CloudApiError } from '../../cloud/index.js';
import type { JobRun } from './job-run.js';

// A create is sent at most once per machine, cluster or filesystem, even when the worker that sent it
// dies before the answer. The cloud has no idempotency key, so a later attempt finds the first one's
// work by name (and job tag). But the cloud may still be holding that first request when the job is
// taken over (its lock expired while the cloud was slow): finding nothing then does not mean nothing
// was made. So the send is recorded with its time, and an attempt that finds nothing waits until the
// client would have given up on that first request (its timeout, creates are never retried by the
// client), then looks again before it sends anything.
//
// A send the cloud answered with an error has nothing left to wait for: the cloud is done with it (a
// 503 says it could not take the request; had it made the machine anyway, the listing shows it and the
// job adopts it). Waiting after each of those made a create under repeated 503s take 16 s an attempt
// (81 s to its answer instead of 31 s) and told the person an answer was lost when none was. Only a
// send with no answer (a timeout, a dropped connection) or a gateway's 502/504 (the cloud behind the
// gateway may still be working on it) is waited out.

/** Beyond the client's timeout: the cloud's own bookkeeping after it answers. */
export const MARGIN_MS = 1_000;

/** Gateway answers: the gateway gave up on the cloud behind it, which may still act on the request. */
const GATEWAY_STATUSES: ReadonlySet<number> = new Set([502, 504]);

interface SendProgress extends Record<string, unknown> {
  sent: boolean;
  /** When the create was sent (ms since the epoch). */
  sentAt: number;
  /** The cloud answered that send (with an error): it holds nothing of it, there is nothing to wait for. */
  answered: boolean;
}

/** Records, before sending, that this job is sending its create now. */
export async function markSent(run: JobRun): Promise<void> {
  await run.saveProgress({ sent: true, sentAt: run.now(), answered: false } satisfies SendProgress);
}

/** Whether `err` is the cloud's own answer to a send, so that nothing of it is still under way. */
export function cloudAnswered(err: unknown): boolean {
  return err instanceof CloudApiError && !GATEWAY_STATUSES.has(err.status);
}

/**
 * Sends a create once: records the send before it (markSent) and, when the cloud answers it with an
 * error, that it was answered, so that the next attempt looks again at once instead of waiting out the
 * client's timeout. `sent` stays true, so a machine the cloud made before answering is still adopted.
 */
export async function sendOnce<T>(run: JobRun, send: () => Promise<T>): Promise<T> {
  await markSent(run);
  try {
    return await send();
  } catch (err) {
    // Unrecorded (Redis away), the next attempt waits as for a lost answer: slower, never a second send.
    if (cloudAnswered(err)) await run.saveProgress({ answered: true }).catch(() => {});
    throw err;
  }
}

/** Records that the cloud refused the create (it answered with an error): nothing was made. */
export async function markNotSent(run: JobRun): Promise<void> {
  await run.saveProgress({ sent: false });
}

/**
 * Called when an attempt finds nothing of the create's name. If an earlier attempt of this job sent
 * the create less than the client's timeout ago, that request may still be under way: waits until it
 * must have been answered or abandoned, and returns true so that the caller looks again. False when
 * there is nothing to wait for.
 */
export async function waitOutEarlierSend(run: JobRun, clientTimeoutMs: number): Promise<boolean> {
  const { sent, sentAt, answered } = run.progress<SendProgress>();
  if (sent !== true || answered === true || typeof sentAt !== 'number') return false;
  const wait = sentAt + clientTimeoutMs + MARGIN_MS - run.now();
  if (wait <= 0) return false;
  await run.update(
    'working',
    `An earlier attempt sent this request and lost the answer; checking whether it went through (up to ${Math.ceil(wait / 1_000)} s)…`,
  );
  await sleep(wait, undefined, { signal: run.signal });
  return true;
}
