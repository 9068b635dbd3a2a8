import type { Queue } from 'bullmq';
import { type SystemJobData, systemJobDataSchema } from './job-data.js';
import type { GpuQueue } from './queue.js';

// Adding and scheduling system jobs on the one queue. Their data is validated here as request jobs'
// is in enqueueRequest, and again by the worker.

export const SYSTEM_JOB_OPTIONS = {
  attempts: 3,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: { age: 3600, count: 200 },
  removeOnFail: { age: 24 * 3600, count: 200 },
} as const;

export const CATALOG_SCHEDULER_ID = 'catalog.refresh';

// The queue is typed for request jobs; system jobs share it with their own schema, checked above.
const systemQueue = (queue: GpuQueue) => queue as unknown as Queue<SystemJobData, unknown, string>;

/** Adds one system job; a job with the same id already queued or recently done makes this a no-op. */
export async function addSystemJob(queue: GpuQueue, data: SystemJobData, jobId: string): Promise<void> {
  const valid = systemJobDataSchema.parse(data);
  await systemQueue(queue).add(valid.system, valid, { ...SYSTEM_JOB_OPTIONS, jobId });
}

/**
 * The catalogue refresh every `everyMs` (default 5 min), as a BullMQ job scheduler: it fires once per
 * period however many processes call this, and upserting again only changes the period.
 */
export async function scheduleCatalogRefresh(
  queue: GpuQueue,
  options: { readonly everyMs?: number; readonly projectId?: string } = {},
): Promise<void> {
  const data = systemJobDataSchema.parse({
    v: 1,
    system: 'catalog.refresh',
    ...(options.projectId ? { projectId: options.projectId } : {}),
  });
  await systemQueue(queue).upsertJobScheduler(
    CATALOG_SCHEDULER_ID,
    { every: options.everyMs ?? 5 * 60_000 },
    { name: 'catalog.refresh', data, opts: SYSTEM_JOB_OPTIONS },
  );
}
