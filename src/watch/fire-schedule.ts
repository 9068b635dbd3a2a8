import type { Instance } from '../cloud/index.js';
import { classifyFailure } from '../commands/kit/job-errors.js';
import { scheduleSummary } from '../commands/schedules/render.js';
import { escapeText } from '../render/job-message.js';
import { getSchedule, recordScheduleRun, type Schedule } from '../store/schedules.js';
import { createOutbox } from '../store/watch-outbox.js';
import { startDrains } from './drain-outbox.js';
import { schedulerIdOf } from './schedule-timers.js';
import type { WatchDeps } from './watch-deps.js';

// One firing of a power schedule: find the machines it acts on now (a tag is looked up each time),
// submit a start or stop request as the owner for each one that is not there already, and tell the
// channel the schedule was made in what it did. The start/stop jobs post their own progress there.

export interface FiringOutcome {
  readonly schedule: string;
  /** Requests submitted (queued or found already queued). */
  readonly submitted: number;
  /** The owner may no longer do it: nothing was submitted. */
  readonly refused?: boolean;
  /** The schedule no longer exists: its timer was removed. */
  readonly gone?: boolean;
}

const ALREADY: Readonly<Record<Schedule['action'], ReadonlySet<string>>> = {
  start: new Set(['running', 'starting']),
  stop: new Set(['stopped', 'stopping']),
};

async function tell(deps: WatchDeps, schedule: Schedule, text: string): Promise<void> {
  const outbox = createOutbox(deps.store);
  const blocks = [{ type: 'section' as const, text: { type: 'mrkdwn' as const, text } }];
  const token = await outbox.push(schedule.channelId, [{ op: 'message', mode: 'post', text, blocks }]);
  if (token) await startDrains(deps, [{ target: schedule.channelId, token }]);
}

function matches(schedule: Schedule, instance: Instance): boolean {
  const t = schedule.target;
  return 'tag' in t ? instance.tags?.[t.tag.key] === t.tag.value : instance.id === t.instance;
}

/** The name to act on where it is unambiguous (what the channel reads), else the id. */
function refOf(instance: Instance, all: readonly Instance[]): string {
  return all.filter((i) => i.name === instance.name).length === 1 ? instance.name : instance.id;
}

export async function fireSchedule(
  deps: WatchDeps,
  id: string,
  firedAt: number,
  signal: AbortSignal,
  /** False while retries remain: a cloud failure then fails the job, and BullMQ tries it again. */
  lastAttempt = true,
): Promise<FiringOutcome> {
  const schedule = await getSchedule(deps.store, id);
  if (!schedule) {
    // Removed while this firing was on its way, or a timer a crash left behind: it fires no more.
    await deps.queue.removeJobScheduler(schedulerIdOf(id));
    return { schedule: id, submitted: 0, gone: true };
  }
  const head = `:alarm_clock: Schedule \`${schedule.id}\` (${escapeText(scheduleSummary(schedule))})`;
  const finish = async (outcome: string, text: string, extra: Partial<FiringOutcome> = {}) => {
    await recordScheduleRun(deps.store, schedule.id, { at: firedAt, outcome });
    await tell(deps, schedule, text);
    return { schedule: schedule.id, submitted: 0, ...extra };
  };
  const submit = deps.submitScheduled;
  if (!submit) {
    deps.log.warn({ schedule: id }, 'a schedule fired in a process that cannot submit requests');
    return { schedule: id, submitted: 0 };
  }
  let instances: Instance[];
  try {
    instances = await deps.cloud.listInstances({ projectId: schedule.projectId, signal });
  } catch (err) {
    const { message, permanent } = classifyFailure(err);
    if (signal.aborted || (!permanent && !lastAttempt)) throw err;
    return finish('the cloud did not list the instances', `${head} did not run: ${escapeText(message)}`);
  }
  const targets = instances.filter((i) => matches(schedule, i));
  if (targets.length === 0) {
    const none =
      'tag' in schedule.target
        ? `no instance carries ${schedule.target.tag.key}=${schedule.target.tag.value} now`
        : `the instance ${schedule.target.name} no longer exists (remove the schedule with \`/gpu schedule rm ${schedule.id}\`)`;
    return finish(`nothing to do: ${none}`, `${head} fired: nothing to do, ${escapeText(none)}.`);
  }
  // Only a running machine can be stopped and only a stopped one started; the rest are named.
  const from = schedule.action === 'start' ? 'stopped' : 'running';
  const due = targets.filter((i) => i.state === from);
  const already = targets.filter((i) => ALREADY[schedule.action].has(i.state)).map((i) => i.name);
  const other = targets.filter((i) => i.state !== from && !ALREADY[schedule.action].has(i.state));
  const skipped = [
    ...(already.length > 0
      ? [`Already ${schedule.action === 'start' ? 'running' : 'stopped'}: ${already.join(', ')}.`]
      : []),
    ...(other.length > 0
      ? [`Not ${from}, so left alone: ${other.map((i) => `${i.name} (${i.state})`).join(', ')}.`]
      : []),
  ];
  const skippedText = skipped.length > 0 ? ` ${skipped.join(' ')}` : '';
  if (due.length === 0) {
    return finish(`nothing to do:${skippedText}`, `${head} fired: nothing to do.${escapeText(skippedText)}`);
  }
  let submitted = 0;
  for (const instance of due) {
    const result = await submit({
      command: { kind: schedule.action, instance: refOf(instance, instances) },
      scheduleId: schedule.id,
      ownerId: schedule.ownerId,
      channelId: schedule.channelId,
      projectId: schedule.projectId,
      firedAt,
    });
    if (result.status === 'refused') {
      // The same role decides every machine of the firing: none is acted on.
      return finish(
        `refused: its owner now has the ${result.role} role`,
        `${head} did not run: it acts as <@${schedule.ownerId}>, who may no longer do it. ${result.message}`,
        { refused: true },
      );
    }
    submitted++;
  }
  const verb = schedule.action === 'start' ? 'starting' : 'stopping';
  const names = due.map((i) => i.name).join(', ');
  await recordScheduleRun(deps.store, schedule.id, { at: firedAt, outcome: `${verb} ${names}` });
  await tell(
    deps,
    schedule,
    `${head} fired: ${verb} ${escapeText(names)} as <@${schedule.ownerId}>.${escapeText(skippedText)}`,
  );
  return { schedule: schedule.id, submitted };
}
