import type { Instance } from '../cloud/index.js';
import { classifyFailure } from '../commands/kit/job-errors.js';
import { scheduleSummary } from '../commands/schedules/render.js';
import { escapeText } from '../render/job-message.js';
import { aboveCeiling } from '../requests/schedule-ceiling.js';
import type { ScheduledAction } from '../requests/scheduled-action.js';
import { readCatalog } from '../store/catalog-cache.js';
import { rememberInstanceType } from '../store/instance-types-seen.js';
import { getSchedule, pauseSchedule, recordScheduleRun, type Schedule } from '../store/schedules.js';
import { createOutbox } from '../store/watch-outbox.js';
import { startDrains } from './drain-outbox.js';
import { ownerStanding } from './owner-standing.js';
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
  /** The owner may no longer use gpuops (deactivated, a guest, another workspace): paused, nothing submitted. */
  readonly paused?: boolean;
  /** Starts sent to an approver again: beyond what the schedule was agreed for. */
  readonly awaitingApproval?: number;
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
  const refused = async (why: string, targets?: readonly string[]) => {
    await deps
      .refusedScheduled?.({
        scheduleId: schedule.id,
        ownerId: schedule.ownerId,
        channelId: schedule.channelId,
        projectId: schedule.projectId,
        action: schedule.action,
        why,
        ...(targets ? { targets } : {}),
      })
      .catch((err: unknown) =>
        deps.log.warn({ err }, 'could not append a refused firing to the audit trail'),
      );
  };
  // Paused once its owner could no longer use gpuops: the channel was told then.
  if (schedule.paused) return { schedule: id, submitted: 0, paused: true };
  const standing = await ownerStanding(deps, schedule.ownerId);
  if (!standing.ok && 'pause' in standing) {
    await pauseSchedule(deps.store, schedule.id, { at: firedAt, reason: standing.pause });
    await refused(standing.pause);
    return finish(
      `paused: ${standing.pause}`,
      `${head} is paused and acts no more: ${standing.pause} (<@${schedule.ownerId}>). Remove it with \`/gpu schedule rm ${schedule.id}\`, or make a new one as someone who may use gpuops.`,
      { paused: true },
    );
  }
  if (!standing.ok) {
    if (!lastAttempt) throw new Error(`Slack users.info: ${standing.unchecked}`);
    return finish(
      `could not check its owner: Slack answered ${standing.unchecked}`,
      `${head} did not run: Slack did not say whether <@${schedule.ownerId}> may still use gpuops (it answered "${escapeText(standing.unchecked)}"); it tries again at its next time.`,
    );
  }
  let instances: Instance[];
  try {
    instances = await deps.cloud.listInstances({ projectId: schedule.projectId, signal });
  } catch (err) {
    const { message, permanent } = classifyFailure(err);
    if (signal.aborted || (!permanent && !lastAttempt)) throw err;
    return finish('the cloud did not list the instances', `${head} did not run: ${escapeText(message)}`);
  }
  const matching = instances.filter((i) => matches(schedule, i));
  // A tag reaches whatever carries it, other people's machines too: only the owner's own are acted
  // on, unless they are an admin.
  const operable =
    'tag' in schedule.target
      ? ((await deps.operableBy?.(
          { userId: schedule.ownerId, channelId: schedule.channelId },
          matching.map((i) => i.id),
        )) ?? new Set<string>())
      : undefined;
  const targets = operable ? matching.filter((i) => operable.has(i.id)) : matching;
  const notTheirs = matching.filter((i) => !targets.includes(i)).map((i) => i.name);
  if (notTheirs.length > 0) await refused("not its owner's to operate", notTheirs);
  if (targets.length === 0 && notTheirs.length > 0) {
    const none = `none of the instances carrying the tag are its owner's to operate (left alone: ${notTheirs.join(', ')})`;
    return finish(`nothing to do: ${none}`, `${head} fired: nothing to do, ${escapeText(none)}.`);
  }
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
    ...(notTheirs.length > 0 ? [`Not its owner's to operate, so left alone: ${notTheirs.join(', ')}.`] : []),
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
  const approvals = await startApprovals(deps, schedule, due, instances);
  let submitted = 0;
  const waiting: string[] = [];
  for (const instance of due) {
    const ref = refOf(instance, instances);
    const scheduled = approvals.get(instance.id);
    const result = await submit({
      command: { kind: schedule.action, instance: ref },
      scheduleId: schedule.id,
      ownerId: schedule.ownerId,
      channelId: schedule.channelId,
      projectId: schedule.projectId,
      firedAt,
      ...(scheduled ? { scheduled } : {}),
    });
    if (result.status === 'pending-approval') {
      waiting.push(instance.name);
      continue;
    }
    if (result.status === 'refused') {
      // The same role decides every machine of the firing: none is acted on.
      return finish(
        'role' in result ? `refused: its owner now has the ${result.role} role` : 'refused',
        `${head} did not run: it acts as <@${schedule.ownerId}>, who may no longer do it. ${result.message}`,
        { refused: true },
      );
    }
    submitted++;
  }
  const verb = schedule.action === 'start' ? 'starting' : 'stopping';
  const acting = due.filter((i) => !waiting.includes(i.name)).map((i) => i.name);
  const names = acting.join(', ');
  const waits =
    waiting.length > 0
      ? ` Waiting for an approval (more than was agreed when the schedule was made): ${waiting.join(', ')}.`
      : '';
  const did =
    acting.length > 0 ? `${verb} ${escapeText(names)} as <@${schedule.ownerId}>.` : 'nothing started yet.';
  await recordScheduleRun(deps.store, schedule.id, {
    at: firedAt,
    outcome: `${acting.length > 0 ? `${verb} ${names}` : 'nothing started'}${waits}`,
  });
  await tell(deps, schedule, `${head} fired: ${did}${escapeText(waits + skippedText)}`);
  return {
    schedule: schedule.id,
    submitted,
    ...(waiting.length > 0 ? { awaitingApproval: waiting.length } : {}),
  };
}

/**
 * For a start: how each due machine goes through the approval step. The machines of the types the
 * schedule was agreed for go as approved when an approver agreed (else today's rule decides, so a
 * tightened policy counts); those beyond, priced with today's price list, are sent to an approver.
 * A schedule stored without a ceiling is held to today's rule, like a typed start.
 */
async function startApprovals(
  deps: WatchDeps,
  schedule: Schedule,
  due: readonly Instance[],
  all: readonly Instance[],
): Promise<Map<string, NonNullable<ScheduledAction['scheduled']>>> {
  const decided = new Map<string, NonNullable<ScheduledAction['scheduled']>>();
  if (schedule.action !== 'start') return decided;
  // The request pipeline prices a start by its machine's type: the listing just said it.
  await Promise.all(
    due.map((i) => rememberInstanceType(deps.store, schedule.projectId, refOf(i, all), i.type)),
  );
  const ceiling = schedule.ceiling;
  if (!ceiling) return decided;
  const catalog = (await readCatalog(deps.store, schedule.projectId))?.catalog;
  const prices = { configurations: catalog?.configurations, pricing: deps.policy.pricing };
  const left: Record<string, number> = { ...ceiling.types };
  const beyond = aboveCeiling(
    ceiling,
    due.map((i) => i.type),
    prices,
  );
  for (const instance of due) {
    const agreed = (left[instance.type] ?? 0) > 0;
    if (agreed) left[instance.type] = (left[instance.type] ?? 0) - 1;
    if (beyond && !agreed) decided.set(instance.id, { ask: beyond });
    else if (schedule.approvalId) decided.set(instance.id, { approved: true });
  }
  return decided;
}
