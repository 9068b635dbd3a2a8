import type { ScheduleTimers } from '../commands/kit/schedule-timers.js';
import type { WatchQueue } from './watch-queue.js';

// Each power schedule is a BullMQ job scheduler on the watchers' queue: it lives in Redis (a restart
// loses nothing) and produces one job per firing however many workers run, so it fires once.

/**
 * A firing the cloud did not answer is tried again for a few minutes (a machine left running all night
 * costs more than a late stop); its requests keep the firing's time, so a retry makes no second job.
 */
export const FIRING_JOB_OPTIONS = {
  attempts: 4,
  backoff: { type: 'exponential', delay: 30_000 },
  removeOnComplete: true,
  removeOnFail: { age: 24 * 3600, count: 100 },
} as const;

/** The job scheduler's id of a schedule: `schedule.s-3f9a2c`. */
export const schedulerIdOf = (scheduleId: string): string => `schedule.${scheduleId}`;

export function watchScheduleTimers(queue: WatchQueue): ScheduleTimers {
  return {
    async upsert({ id, pattern, tz }) {
      await queue.upsertJobScheduler(
        schedulerIdOf(id),
        { pattern, tz },
        { name: 'watch.schedule', data: { v: 1, job: 'schedule', id }, opts: FIRING_JOB_OPTIONS },
      );
    },
    async remove(id) {
      return queue.removeJobScheduler(schedulerIdOf(id));
    },
    async next(id) {
      const scheduler = await queue.getJobScheduler(schedulerIdOf(id));
      return scheduler?.next ?? undefined;
    },
  };
}
