import { setTimeout as sleep } from 'node:timers/promises';
import type { JobRun } from './job-run.js';

// A create is sent at most once per machine, cluster or filesystem, even when the worker that sent it
// dies before the answer. The cloud has no idempotency key, so a later attempt finds the first one's
// work by name (and job tag). But the cloud may still be holding that first request when the job is
// taken over (its lock expired while the cloud was slow): finding nothing then does not mean nothing
// was made. So the send is recorded with its time, and an attempt that finds nothing waits until the
// client would have given up on that first request (its timeout, creates are never retried by the
// client), then looks again before it sends anything.

/** Beyond the client's timeout: the cloud's own bookkeeping after it answers. */
const MARGIN_MS = 1_000;

interface SendProgress extends Record<string, unknown> {
  sent: boolean;
  /** When the create was sent (ms since the epoch). */
  sentAt: number;
}

/** Records, before sending, that this job is sending its create now. */
export async function markSent(run: JobRun): Promise<void> {
  await run.saveProgress({ sent: true, sentAt: run.now() } satisfies SendProgress);
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
  const { sent, sentAt } = run.progress<SendProgress>();
  if (sent !== true || typeof sentAt !== 'number') return false;
  const wait = sentAt + clientTimeoutMs + MARGIN_MS - run.now();
  if (wait <= 0) return false;
  await run.update(
    'working',
    `An earlier attempt sent this request and lost the answer; checking whether it went through (up to ${Math.ceil(wait / 1_000)} s)…`,
  );
  await sleep(wait, undefined, { signal: run.signal });
  return true;
}
