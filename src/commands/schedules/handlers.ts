import { createHash } from 'node:crypto';
import { countNoun } from '../../render/count-noun.js';
import { instanceOwners } from '../../store/instance-owners.js';
import {
  getSchedule,
  listSchedules,
  MAX_SCHEDULES_PER_CHANNEL,
  removeSchedule,
  type Schedule,
  type ScheduleTarget,
  saveSchedule,
} from '../../store/schedules.js';
import type { Handlers } from '../kit/handler.js';
import { PermanentJobError } from '../kit/job-errors.js';
import type { JobRun, Outcome } from '../kit/job-run.js';
import { resolveRef } from '../kit/resolve.js';
import type { ScheduleTimers } from '../kit/schedule-timers.js';
import type { CommandOf } from '../registry.js';
import { canonicalTimeZone, formatInZone, nextRun, TIME_ZONE_RULE } from './parse-when.js';
import { scheduleListBlocks, scheduleSummary } from './render.js';

// The schedule family's jobs: make a schedule (after its approval, when a costly start needed one),
// list a channel's, remove one. The firing is the watchers' (src/watch/fire-schedule.ts).

function timersOf(run: JobRun): ScheduleTimers {
  const timers = run.deps.schedules;
  if (!timers) {
    throw new PermanentJobError(
      'Schedules are not available in this gpuops: its workers run no watchers. Ask whoever runs it to start the worker role (`gpuops worker` or `gpuops start`).',
    );
  }
  return timers;
}

/**
 * A person's IANA time zone from Slack's users.info; undefined when Slack answers without one (or
 * does not know the person). No answer at all is thrown, so the job is tried again.
 */
async function slackTimeZone(run: JobRun, userId: string): Promise<string | undefined> {
  try {
    const answer = await run.deps.slack.users.info({ user: userId });
    const tz = answer.user?.tz;
    return typeof tz === 'string' ? canonicalTimeZone(tz) : undefined;
  } catch (err) {
    if ((err as { data?: { error?: string } }).data?.error === undefined) throw err;
    run.deps.log.warn({ err, userId }, 'users.info gave no time zone');
    return undefined;
  }
}

/** Ids a creation tries, in order, when the ones before are taken by other schedules. */
const ID_TRIES = 5;

/**
 * The schedule's id for the `attempt`-th try, from its job's: a retried or re-delivered creation tries
 * the same ids in the same order and finds its own record. 12 hex digits (48 bits).
 */
export function scheduleIdFor(jobId: string, attempt: number): string {
  const seed = attempt === 0 ? jobId : `${jobId}#${attempt}`;
  return `s-${createHash('sha256').update(seed).digest('hex').slice(0, 12)}`;
}

async function targetOf(
  run: JobRun,
  command: CommandOf<'schedule.start' | 'schedule.stop'>,
): Promise<{ target: ScheduleTarget; note: string; types: readonly string[] }> {
  const { cloud } = run.deps;
  if (command.instance !== undefined) {
    const instance = await resolveRef(
      command.instance,
      'instance',
      () => cloud.listInstances(run.call),
      (id) => cloud.getInstance({ id }, run.call),
    );
    return { target: { instance: instance.id, name: instance.name }, note: '', types: [instance.type] };
  }
  const tag = command.tag!;
  const carrying = (await cloud.listInstances(run.call)).filter((i) => i.tags?.[tag.key] === tag.value);
  const names = carrying.map((i) => i.name).slice(0, 10);
  const note =
    carrying.length === 0
      ? ` No instance carries ${tag.key}=${tag.value} now; it acts on those that do when it fires.`
      : ` ${countNoun(carrying.length, 'instance')} ${carrying.length === 1 ? 'carries' : 'carry'} ${tag.key}=${tag.value} now (${names.join(', ')}); it acts on those that do when it fires.`;
  // What is agreed for: the requester's own machines (a firing acts on no one else's unless they are
  // an admin, and then goes beyond this and asks again).
  const owners = await instanceOwners(
    run.deps.store,
    carrying.map((i) => i.id),
  );
  const own = carrying.filter((_, i) => owners[i] === run.data.ctx.userId);
  return { target: { tag }, note, types: own.map((i) => i.type) };
}

/** What a start schedule is agreed for: the machines of each type its target has now. */
function ceilingOf(types: readonly string[]): NonNullable<Schedule['ceiling']> {
  const counts: Record<string, number> = {};
  for (const t of types) counts[t] = (counts[t] ?? 0) + 1;
  return { machines: types.length, types: counts };
}

async function createSchedule(
  run: JobRun,
  command: CommandOf<'schedule.start' | 'schedule.stop'>,
  action: Schedule['action'],
): Promise<Outcome> {
  const timers = timersOf(run);
  const { ctx } = run.data;
  const tz = command.tz ?? (await slackTimeZone(run, ctx.userId));
  if (tz === undefined) {
    throw new PermanentJobError(
      `Slack did not say which time zone you are in, so gpuops cannot tell when ${command.when} is for you. Add --tz with your zone to the command (${TIME_ZONE_RULE}).`,
    );
  }
  const next = nextRun(command.pattern, tz, run.now());
  if (next === undefined) {
    throw new PermanentJobError(`\`${command.when}\` never fires in ${tz}; choose another time.`);
  }
  const projectId = run.projectId;
  const { target, note, types } = await targetOf(run, command);
  const madeBy = run.job.id ?? `${ctx.userId}-${ctx.requestedAt}`;
  const existing = await listSchedules(run.deps.store, { channelId: ctx.channelId });
  if (existing.length >= MAX_SCHEDULES_PER_CHANNEL && !existing.some((s) => s.madeBy === madeBy)) {
    throw new PermanentJobError(
      `This channel already has ${existing.length} schedules, the most it may: remove one with \`/gpu schedule rm <id>\` first.`,
    );
  }
  const made: Omit<Schedule, 'id'> = {
    action,
    target,
    when: command.when,
    pattern: command.pattern,
    tz,
    channelId: ctx.channelId,
    projectId,
    ownerId: ctx.userId,
    createdAt: ctx.requestedAt,
    ...(run.data.approvalId ? { approvalId: run.data.approvalId } : {}),
    madeBy,
    ...(action === 'start' ? { ceiling: ceilingOf(types) } : {}),
  };
  // The record before its timer: a firing that finds no record removes its timer, never the reverse.
  // An id another schedule holds is never overwritten: the next one is tried.
  let schedule: Schedule | undefined;
  for (let attempt = 0; attempt < ID_TRIES && !schedule; attempt++) {
    const candidate: Schedule = { id: scheduleIdFor(madeBy, attempt), ...made };
    if (await saveSchedule(run.deps.store, candidate)) schedule = candidate;
  }
  if (!schedule) {
    throw new PermanentJobError(
      'gpuops could not find a free id for this schedule, so none was made. Please send the command again.',
    );
  }
  const { id } = schedule;
  await timers.upsert(schedule);
  return {
    detail:
      `Scheduled \`${id}\`: ${scheduleSummary(schedule)}. Next: ${formatInZone(next, tz)} ${tz}.${note} ` +
      `Each run is posted here; \`/gpu schedule rm ${id}\` removes it.`,
  };
}

async function listChannelSchedules(run: JobRun): Promise<Outcome> {
  const { ctx } = run.data;
  const schedules = await listSchedules(run.deps.store, { channelId: ctx.channelId });
  const viewerTz = await slackTimeZone(run, ctx.userId);
  const timers = run.deps.schedules;
  const nexts = await Promise.all(
    schedules.map((s) =>
      timers ? timers.next(s.id) : Promise.resolve(nextRun(s.pattern, s.tz, run.now())?.getTime()),
    ),
  );
  const { text, blocks } = scheduleListBlocks(schedules, nexts, viewerTz ?? 'UTC', viewerTz !== undefined);
  return { detail: text, result: blocks };
}

async function removeChannelSchedule(run: JobRun, command: CommandOf<'schedule.rm'>): Promise<Outcome> {
  const { ctx } = run.data;
  const schedule = await getSchedule(run.deps.store, command.id);
  if (!schedule || schedule.channelId !== ctx.channelId) {
    throw new PermanentJobError(
      `This channel has no schedule \`${command.id}\`: \`/gpu schedules\` lists the ones it has.`,
    );
  }
  // The timer first: once it is gone nothing fires, and a retry still finds the record to finish.
  await timersOf(run).remove(schedule.id);
  await removeSchedule(run.deps.store, schedule.id, { channelId: ctx.channelId });
  return {
    detail: `Removed schedule \`${schedule.id}\` (${scheduleSummary(schedule)}): it does not fire again.`,
  };
}

export const handlers = {
  'schedule.start': (run, c) => createSchedule(run, c, 'start'),
  'schedule.stop': (run, c) => createSchedule(run, c, 'stop'),
  schedules: (run) => listChannelSchedules(run),
  'schedule.rm': removeChannelSchedule,
} satisfies Handlers;
