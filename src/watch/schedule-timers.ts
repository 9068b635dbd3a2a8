import type { ScheduleTimers } from '../commands/kit/schedule-timers.js';
import { LOOK_JOB_OPTIONS, type WatchQueue } from './watch-queue.js';

// Each power schedule is a BullMQ job scheduler on the watchers' queue: it lives in Redis (a restart
// loses nothing) and produces one job per firing however many workers run, so it fires once.

/** The job scheduler's id of a schedule: `schedule.s-3f9a2c`. */
export const schedulerIdOf = (scheduleId: string): string => `schedule.${scheduleId}`;

export function watchScheduleTimers(queue: WatchQueue): ScheduleTimers {
  return {
    async upsert({ id, pattern, tz }) {
      await queue.upsertJobScheduler(
        schedulerIdOf(id),
        { pattern, tz },
        { name: 'watch.schedule', data: { v: 1, job: 'schedule', id }, opts: LOOK_JOB_OPTIONS },
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
