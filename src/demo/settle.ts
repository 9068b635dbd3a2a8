import type { QueueEvents } from 'bullmq';
import type { LocalSlackApi } from '../chat/local-slack-api.js';
import type { GpuQueue } from '../jobs/queue.js';

// When a script may go on to its next line: nothing waiting or running on the queue (the job
// schedulers' next runs aside), no retry waiting out its backoff, and no message still saying Queued,
// Working or Waiting (a request waiting for an approver's button waits for a person, not for us).
// Checked again on every queue event and every change people could see; a slow timer only catches
// what no event announced.

export interface SettleOptions {
  readonly queue: GpuQueue;
  readonly events: QueueEvents;
  readonly slack: LocalSlackApi;
  /** How long one line may take before the script goes on without it. */
  readonly timeoutMs: number;
  /** Safety net between events; default 1 s. */
  readonly recheckMs?: number;
}

export type SettleResult = { readonly ok: true } | { readonly ok: false; readonly pending: string };

const QUEUE_EVENTS = [
  'added',
  'waiting',
  'active',
  'completed',
  'failed',
  'delayed',
  'drained',
  'removed',
] as const;

/** What is still going on, in words, or undefined when everything has settled. */
async function pendingWork(queue: GpuQueue, slack: LocalSlackApi): Promise<string | undefined> {
  const counts = await queue.getJobCounts('waiting', 'active', 'prioritized', 'waiting-children');
  const busy = Object.entries(counts).filter(([, n]) => n > 0);
  if (busy.length > 0) return `jobs ${busy.map(([state, n]) => `${state}: ${n}`).join(', ')}`;
  // Scheduler runs wait as delayed jobs all the time; a retry in its backoff is delayed too, and counts.
  const delayed = (await queue.getJobs(['delayed'], 0, 200)).filter((job) => job && !job.repeatJobKey);
  if (delayed.length > 0) return `${delayed.length} job(s) waiting to retry`;
  const open = slack.inProgress().filter((m) => !/approv/i.test(m.text ?? ''));
  if (open.length > 0) return open.map((m) => `#${m.number} (${(m.text ?? '').split('\n')[0]})`).join(', ');
  return undefined;
}

export function createSettler(options: SettleOptions): () => Promise<SettleResult> {
  const { queue, events, slack } = options;
  return () =>
    new Promise<SettleResult>((resolve) => {
      let checking = false;
      let again = false;
      let finished = false;
      let last = 'the queue';
      const cleanups: Array<() => void> = [];
      const finish = (result: SettleResult) => {
        if (finished) return;
        finished = true;
        for (const cleanup of cleanups) cleanup();
        resolve(result);
      };
      const check = async () => {
        if (finished) return;
        if (checking) {
          again = true;
          return;
        }
        checking = true;
        try {
          do {
            again = false;
            const pending = await pendingWork(queue, slack);
            if (pending === undefined) return finish({ ok: true });
            last = pending;
          } while (again && !finished);
        } catch (err) {
          last = `the queue (${(err as Error).message})`;
        } finally {
          checking = false;
        }
      };
      const onEvent = () => void check();
      for (const name of QUEUE_EVENTS) {
        events.on(name, onEvent);
        cleanups.push(() => events.off(name, onEvent));
      }
      cleanups.push(slack.onActivity(onEvent));
      const recheck = setInterval(onEvent, options.recheckMs ?? 1_000);
      const limit = setTimeout(() => finish({ ok: false, pending: last }), options.timeoutMs);
      cleanups.push(
        () => clearInterval(recheck),
        () => clearTimeout(limit),
      );
      void check();
    });
}
