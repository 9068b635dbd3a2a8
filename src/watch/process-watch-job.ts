import { type Job, UnrecoverableError } from 'bullmq';
import { z } from 'zod';
import type { WatchDeps } from './watch-deps.js';
import { type WatchJobData, watchJobDataSchema } from './watch-queue.js';
import { fanOutIdleChecks, fanOutPolls } from './watch-tick.js';

// One attempt of a watcher job: the data is checked again (it may come from another version), then
// dispatched by its `job` name. Looks and checks are not retried (the next interval is the retry);
// drains are, and keep their lease meanwhile. Each kind's code loads with its first job: a bot that
// watches nothing only ever runs the ticks.

export async function processWatchJob(job: Job, deps: WatchDeps, signal: AbortSignal): Promise<string> {
  const parsed = watchJobDataSchema.safeParse(job.data);
  if (!parsed.success) {
    deps.log.error({ jobId: job.id, name: job.name }, 'watch job data rejected');
    throw new UnrecoverableError(`watch job data rejected: ${z.prettifyError(parsed.error)}`);
  }
  const data: WatchJobData = parsed.data;
  try {
    switch (data.job) {
      case 'tick':
        return await fanOutPolls(deps);
      case 'poll':
        return JSON.stringify(
          await (await import('./poll-project.js')).pollProject(deps, data.projectId, signal),
        );
      case 'idle.tick':
        return await fanOutIdleChecks(deps);
      case 'idle':
        return JSON.stringify(
          await (await import('./idle-check.js')).checkIdle(deps, data.projectId, signal),
        );
      case 'capacity':
        return JSON.stringify(await (await import('./waitlist-check.js')).checkWaitlist(deps, signal));
      case 'budgets':
        return await (await import('./budget-alerts.js')).checkBudgetAlerts(deps);
      case 'digest':
        return await (await import('./digest.js')).sendDigests(deps, signal);
      case 'home':
        if (!deps.home) return 'no Home tab publisher';
        await deps.home.publish(data.userId);
        return `published the Home tab of ${data.userId}`;
      case 'schedule':
        return JSON.stringify(
          await (await import('./fire-schedule.js')).fireSchedule(
            deps,
            data.id,
            Number(job.opts.prevMillis ?? job.timestamp),
            signal,
            job.attemptsMade + 1 >= (job.opts.attempts ?? 1),
          ),
        );
      case 'drain':
        return JSON.stringify(await (await import('./drain-outbox.js')).drainOutbox(deps, data, signal));
    }
  } catch (err) {
    if (!signal.aborted) {
      deps.log.warn(
        { jobId: job.id, name: job.name, attempt: job.attemptsMade + 1, err },
        'watch job failed',
      );
    }
    throw err;
  }
}
