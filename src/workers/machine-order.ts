import { DelayedError } from 'bullmq';
import type { CommandJobData } from '../commands/job-payload.js';
import type { JobRun } from '../commands/kit/job-run.js';
import { changedMachineOf } from '../commands/registry.js';
import { machineOrderId } from '../store/machine-order.js';
import type { Store } from '../store/store.js';
import type { WorkerDeps } from './worker-deps.js';

// Requests on one machine take effect in the order they were accepted. A start accepted while an
// earlier stop of the same machine is unfinished (its worker killed and its lock not yet run out, or
// its next attempt waiting out a back-off) must not act before it: the stop would land after the start
// and the machine end stopped, against the person's last request. So before acting, a job that changes
// a machine looks for a job accepted before it on that machine that BullMQ still holds unfinished; if
// there is one, it is moved back to the delayed set and tried again shortly, its message saying what it
// waits for. It does not wait inside the processor: the earlier job may need this worker's slot.

/** How often a job waiting for an earlier one on its machine looks again. */
export const ORDER_RECHECK_MS = 1_000;

/**
 * How long a job accepted but not on the queue yet (the listener adds it just after the accepting
 * step) counts as unfinished; after that a job BullMQ does not know is taken as never added.
 */
const NOT_YET_ADDED_MS = 60_000;

/** BullMQ states of a job that has not ended. */
const UNFINISHED: ReadonlySet<string> = new Set([
  'active',
  'waiting',
  'delayed',
  'prioritized',
  'waiting-children',
]);

/** What the attempt needs of its queue: its lock's token, and the BullMQ state of another job. */
export interface QueueTurn {
  readonly token?: string | undefined;
  stateOf(jobId: string): Promise<string>;
}

/** Progress key: the job the request's message says it waits for. */
const WAITING_FOR = 'orderWaitFor';

/** The machine order the job belongs to, if its command changes one machine. */
function machineOf(data: CommandJobData): string | undefined {
  const name = changedMachineOf(data.command);
  return name === undefined ? undefined : machineOrderId(data.ctx.projectId, name);
}

/** The first job accepted before `jobId` on `machine` that has not ended; finished ones leave the order. */
async function blockerOf(store: Store, machine: string, jobId: string, queue: QueueTurn) {
  const { now, earlier } = await store.earlierOnMachine(machine, jobId);
  for (const job of earlier) {
    const state = await queue.stateOf(job.id);
    if (UNFINISHED.has(state)) return job.id;
    if (state === 'unknown' && now - job.acceptedAt < NOT_YET_ADDED_MS) {
      // Accepted moments ago and not on the queue yet, or taken back: its record says which.
      const record = await store.job(job.id);
      if (record && record.state !== 'done' && record.state !== 'failed') return job.id;
    }
    await store.leaveMachineOrder(machine, job.id);
  }
  return undefined;
}

/**
 * Before the job acts: when a job accepted before it on the same machine has not ended, tells the
 * requester what it waits for, moves the job back to the delayed set and throws BullMQ's DelayedError
 * (the attempt ends without counting as one). Returns when it is this job's turn.
 */
export async function awaitTurn(run: JobRun, queue: QueueTurn): Promise<void> {
  const machine = machineOf(run.data);
  if (machine === undefined) return;
  const jobId = run.job.id!;
  const blocker = await blockerOf(run.deps.store, machine, jobId, queue);
  const told = run.progress<Record<string, string | null>>()[WAITING_FOR];
  if (blocker === undefined) {
    if (typeof told === 'string') await run.saveProgress({ [WAITING_FOR]: null });
    return;
  }
  if (told !== blocker) {
    const earlier = await run.deps.store.job(blocker);
    const what = earlier?.summary ?? 'an earlier request on this machine';
    run.deps.log.info({ jobId, waitsFor: blocker }, 'waiting for an earlier request on the same machine');
    await run.update('queued', `Waiting for ${what} (job ${blocker}) to finish first.`);
    await run.flushProgress();
    await run.saveProgress({ [WAITING_FOR]: blocker });
  }
  await run.job.moveToDelayed(run.now() + ORDER_RECHECK_MS, queue.token);
  throw new DelayedError(`waiting for job ${blocker} on the same machine`);
}

/**
 * Once the job has answered: it leaves its machine's order, so the next one may act. Never throws: a
 * job left in the order is found finished by the next one that looks.
 */
export async function leaveTurn(deps: WorkerDeps, data: CommandJobData, jobId: string): Promise<void> {
  const machine = machineOf(data);
  if (machine === undefined) return;
  await deps.store
    .leaveMachineOrder(machine, jobId)
    .catch((err: unknown) =>
      deps.log.warn({ jobId, err }, 'could not take the job out of its machine order'),
    );
}
