import type { Queue } from 'bullmq';
import { type SystemJobData, systemJobDataSchema } from './job-data.js';
import type { GpuQueue } from './queue.js';
import { SYSTEM_JOB_OPTIONS } from './system-jobs.js';

// The guardrails' own jobs on the one queue: the approval expiry and the request sweeper (job
// schedulers, so each fires once per period however many replicas run) and each lease's reminder and stop (delayed jobs whose ids
// carry the stop time, so re-adding them is a no-op and an extended lease gets new ones).

export const APPROVALS_EXPIRY_SCHEDULER_ID = 'approvals.expire';
export const DEFAULT_EXPIRY_EVERY_MS = 60_000;

const systemQueue = (queue: GpuQueue) => queue as unknown as Queue<SystemJobData, unknown, string>;

/** Closes expired approval requests every `everyMs` (default a minute). */
export async function scheduleApprovalExpiry(
  queue: GpuQueue,
  options: { readonly everyMs?: number } = {},
): Promise<void> {
  const data = systemJobDataSchema.parse({ v: 1, system: 'approvals.expire' });
  await systemQueue(queue).upsertJobScheduler(
    APPROVALS_EXPIRY_SCHEDULER_ID,
    { every: options.everyMs ?? DEFAULT_EXPIRY_EVERY_MS },
    { name: 'approvals.expire', data, opts: SYSTEM_JOB_OPTIONS },
  );
}

export const REQUESTS_SWEEP_SCHEDULER_ID = 'requests.sweep';
export const DEFAULT_SWEEP_EVERY_MS = 10_000;

/** The sweeper: drives requests stuck between states forward every `everyMs` (default 10 s). */
export async function scheduleRequestSweep(
  queue: GpuQueue,
  options: { readonly everyMs?: number } = {},
): Promise<void> {
  const data = systemJobDataSchema.parse({ v: 1, system: 'requests.sweep' });
  await systemQueue(queue).upsertJobScheduler(
    REQUESTS_SWEEP_SCHEDULER_ID,
    { every: options.everyMs ?? DEFAULT_SWEEP_EVERY_MS },
    { name: 'requests.sweep', data, opts: SYSTEM_JOB_OPTIONS },
  );
}

/** The reminder and the stop of a lease ending at `stopAt`, as delayed jobs. */
export async function scheduleLease(
  queue: GpuQueue,
  lease: { readonly id: string; readonly stopAt: number; readonly remindBeforeSeconds: number },
  now = Date.now(),
): Promise<void> {
  const q = systemQueue(queue);
  const remindAt = lease.stopAt - lease.remindBeforeSeconds * 1000;
  const jobs = [
    { system: 'lease.remind' as const, at: remindAt, id: `lease-remind-${lease.id}-${lease.stopAt}` },
    { system: 'lease.stop' as const, at: lease.stopAt, id: `lease-stop-${lease.id}-${lease.stopAt}` },
  ];
  for (const job of jobs) {
    // A reminder due before the lease even started (remind_before longer than what is left) is skipped.
    if (job.system === 'lease.remind' && (lease.remindBeforeSeconds <= 0 || remindAt <= now)) continue;
    const data = systemJobDataSchema.parse({
      v: 1,
      system: job.system,
      leaseId: lease.id,
      stopAt: lease.stopAt,
    });
    await q.add(job.system, data, {
      ...SYSTEM_JOB_OPTIONS,
      // Kept a day after it ran, so adding it again (a retried job) is still a no-op.
      removeOnComplete: { age: 24 * 3600 },
      jobId: job.id,
      delay: Math.max(0, job.at - now),
    });
  }
}
