import { setTimeout as sleep } from 'node:timers/promises';
import { CloudTimeoutError, type RetryEvent } from '../../cloud/index.js';
import { cloudAnswered, MARGIN_MS } from './earlier-send.js';
import type { JobRun } from './job-run.js';

// A start or stop the cloud did not answer may still be carried out later: the cloud was slow, the
// client gave up after its timeout and tried again, and that second try did the work. If the job
// answered Done at once, the person's next request (start after stop) could be undone by the first
// try landing after it. So every try of the call that got no answer (a timeout, a dropped connection,
// a gateway's 502/504) is noted with the moment it can no longer land, as creates assume: its send
// plus the client's timeout plus the one-second margin (earlier-send.ts). For a timed-out try that is
// its failure plus the margin; for one that failed sooner, its failure plus the timeout and margin.
// The moment is kept in the job's progress, so an attempt that follows a failed one waits it out too.
// The job answers only after that moment, having read the machine again.
//
// An attempt can also die with its call under way (its worker killed, its lock lost) before it could note
// anything, and the cloud carries out a request whatever became of the process that sent it. So each
// send is marked in the progress before it leaves (`sendingSince`) and unmarked once the call has ended;
// an attempt that starts and finds the mark knows the one before it died mid-call. Every try of that dead
// attempt was sent before this attempt began, so none can land after this attempt's start plus the
// client's timeout plus the margin: that becomes the moment to wait out (model test, seed 898399906:
// a stop taken over from a killed worker answered Done at once, the person started the machine, and the
// dead worker's stop, still held by the cloud, stopped it again).

interface LateProgress extends Record<string, unknown> {
  /** Until when (ms since the epoch) a try this job abandoned may still be carried out. */
  lateUntil: number;
  /** When an attempt began sending its start or stop (ms since the epoch); null once that call ended. */
  sendingSince: number | null;
}

function landsBy(run: JobRun, error: unknown, timeoutMs: number): number | undefined {
  if (cloudAnswered(error)) return undefined;
  return run.now() + (error instanceof CloudTimeoutError ? 0 : timeoutMs) + MARGIN_MS;
}

/**
 * Sends a start or stop, noting in the job's progress until when any try the client abandoned on the way
 * may still land. The call's own outcome (answer or error) is returned or thrown unchanged.
 */
export async function sendAction<T>(
  run: JobRun,
  timeoutMs: number,
  send: (onRetry: (event: RetryEvent) => void) => Promise<T>,
): Promise<T> {
  let until = run.progress<LateProgress>().lateUntil ?? 0;
  const note = (error: unknown) => {
    until = Math.max(until, landsBy(run, error, timeoutMs) ?? 0);
  };
  // Ended: what may still land replaces the mark. Unrecorded, the next attempt finds the mark and waits
  // as for a dead attempt: longer than needed, never too short.
  const ended = () =>
    run.saveProgress({
      sendingSince: null,
      ...(until > 0 ? { lateUntil: until } : {}),
    } satisfies Partial<LateProgress>);
  // Marked before it leaves: an attempt that dies with the call under way leaves the mark behind.
  await run.saveProgress({ sendingSince: run.now() } satisfies Partial<LateProgress>);
  try {
    const result = await send((event) => note(event.error));
    await ended();
    return result;
  } catch (err) {
    note(err);
    await ended().catch(() => {});
    throw err;
  }
}

/**
 * At the start of an attempt: when the attempt before it died while sending a start or stop (the mark
 * is still there), notes that its tries may land until now plus the client's timeout and the margin, so
 * that this attempt answers only after that (waitOutLateAction).
 */
export async function inheritUnendedSend(run: JobRun, timeoutMs: number): Promise<void> {
  const { sendingSince, lateUntil } = run.progress<LateProgress>();
  if (typeof sendingSince !== 'number') return;
  const until = Math.max(lateUntil ?? 0, run.now() + timeoutMs + MARGIN_MS);
  run.deps.log.warn(
    { jobId: run.job.id, sendingSince, lateUntil: until },
    'an earlier attempt died with a start or stop under way; answering only once it can no longer land',
  );
  await run.saveProgress({ sendingSince: null, lateUntil: until } satisfies LateProgress);
}

/**
 * Waits until no try this job abandoned can still land, telling the person why; true when it waited,
 * so that the caller reads the machine again before it answers.
 */
export async function waitOutLateAction(run: JobRun, what: string): Promise<boolean> {
  const { lateUntil } = run.progress<LateProgress>();
  if (typeof lateUntil !== 'number') return false;
  const wait = lateUntil - run.now();
  if (wait <= 0) return false;
  await run.update(
    'working',
    `The cloud did not answer an earlier try to ${what}, and may still carry it out; waiting ${Math.ceil(wait / 1_000)} s for that before answering…`,
  );
  await sleep(wait, undefined, { signal: run.signal });
  return true;
}
