import { AsyncLocalStorage } from 'node:async_hooks';
import { CloudNetworkError, CloudTimeoutError, type RetryEvent } from '../cloud/index.js';

// "The cloud API did not answer: retrying in the background." The cloud clients are shared by every
// job, so their retry hook cannot know whose request is waiting: each job runs its handler inside
// `whileRunning`, and a retry after no answer reaches that job's listener, wherever in the handler
// the call was made. It only tells; whether and how a call is retried stays retry.ts's decision.

const current = new AsyncLocalStorage<() => void>();

/** Whether a failure means the API did not answer at all (as opposed to answering with an error). */
export function isNoAnswer(err: unknown): boolean {
  return err instanceof CloudNetworkError || err instanceof CloudTimeoutError;
}

/** The cloud clients' onRetry hook. */
export function noticeCloudRetry(event: RetryEvent): void {
  if (!isNoAnswer(event.error)) return;
  try {
    current.getStore()?.();
  } catch {}
}

/** Runs `fn`; a cloud call inside it that got no answer and will be retried calls `onNoAnswer`. */
export function whileRunning<T>(onNoAnswer: () => void, fn: () => Promise<T>): Promise<T> {
  return current.run(onNoAnswer, fn);
}
