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

interface LateProgress extends Record<string, unknown> {
  /** Until when (ms since the epoch) a try this job abandoned may still be carried out. */
  lateUntil: number;
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
  const save = () => (until > 0 ? run.saveProgress({ lateUntil: until } satisfies LateProgress) : undefined);
  try {
    const result = await send((event) => note(event.error));
    await save();
    return result;
  } catch (err) {
    note(err);
    // Unrecorded (Redis away), this attempt fails anyway; its successor cannot know, the known hole.
    await save()?.catch(() => {});
    throw err;
  }
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
