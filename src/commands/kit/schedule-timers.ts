// What the schedule handlers need from the queue that fires schedules, and nothing more: the
// commands layer must not import the watchers (they import the request pipeline, which imports
// commands). src/watch/schedule-timers.ts implements it with BullMQ job schedulers.

export interface ScheduleTimers {
  /** Creates or updates the job scheduler of a schedule: `pattern` read in the IANA zone `tz`. */
  upsert(schedule: { readonly id: string; readonly pattern: string; readonly tz: string }): Promise<void>;
  /** Removes it, so it fires no more; true when there was one. */
  remove(id: string): Promise<boolean>;
  /** When its job scheduler fires next (ms), or undefined when it has none. */
  next(id: string): Promise<number | undefined>;
}
