import { z } from 'zod';
import { type CostEstimate, estimateMachines, formatUsd } from '../../pricing/cost.js';
import { type ArgReader, shown } from '../arg-reader.js';
import { lookupNeed, name, onName, ruled, simple } from '../schema-kit.js';
import { type CommandCost, type CostInput, defineCommand, type Effects, type Need } from '../spec.js';
import { checkTagKey, checkTagValue, TAG_KEY_RULE, TAG_VALUE_RULE } from '../value-rules.js';
import {
  canonicalTimeZone,
  HOURS_PER_MONTH,
  parseWhen,
  runHoursPerMonth,
  TIME_ZONE_RULE,
} from './parse-when.js';

// Scheduled power actions: `/gpu schedule start|stop <instance|tag> <when>`, `/gpu schedules`,
// `/gpu schedule rm <id>`. Creating one is a request like any other (the role of the action it
// schedules, an approval for a costly start); each firing is a start or stop job. docs/schedules.md.

const TARGET = 'an instance name or id, or a tag as key=value (such as team=ml)';

const tagSchema = z.object({
  key: ruled(checkTagKey, TAG_KEY_RULE),
  value: ruled(checkTagValue, TAG_VALUE_RULE),
});

const timeZone = z.string().refine((tz) => canonicalTimeZone(tz) === tz, { error: TIME_ZONE_RULE });

const scheduleCommand = <K extends string>(kind: K) =>
  z.object({
    kind: z.literal(kind),
    /** The target: one instance by name or id, or every instance carrying a tag when it fires. */
    instance: name.optional(),
    tag: tagSchema.optional(),
    /** As typed, normalised: `weekdays 20:00` or the cron expression. */
    when: z.string().min(1).max(120),
    /** Five-field cron pattern. */
    pattern: z.string().min(1).max(120),
    /** `--tz`: the zone the time is read in, instead of the requester's Slack zone. */
    tz: timeZone.optional(),
  });

type ScheduleCommand = z.infer<ReturnType<typeof scheduleCommand>>;

/** The target as typed: `train-01` or `team=ml`. */
export function targetText(c: Pick<ScheduleCommand, 'instance' | 'tag'>): string {
  return c.tag ? `${c.tag.key}=${c.tag.value}` : (c.instance ?? '');
}

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

function readSchedule<K extends string>(
  r: ArgReader,
  kind: K,
): z.infer<ReturnType<typeof scheduleCommand<K>>> {
  const a = r.args({ tz: 'value' });
  const target = a.positionals[0];
  if (target === undefined) r.fail(`${r.label()} needs ${TARGET}, then a time`);
  const aimed = target.includes('=')
    ? (() => {
        const [key, value] = r.pair(target, 'A tag target', checkTagKey, checkTagValue);
        return { tag: { key, value } };
      })()
    : { instance: r.name(target, TARGET) };
  const when = parseWhen(a.positionals.slice(1));
  const tzText = a.values.tz?.[0];
  const tz = tzText === undefined ? undefined : canonicalTimeZone(tzText);
  // Both the time and the zone are checked, so one answer names every mistake in the line.
  const problems = [
    ...(typeof when === 'string' ? [when] : []),
    ...(tzText !== undefined && tz === undefined
      ? [`${shown(tzText)} is not a time zone gpuops knows (${TIME_ZONE_RULE})`]
      : []),
  ];
  if (problems.length === 1) r.fail(capitalised(problems[0]!));
  if (problems.length > 1) r.fail(`Two mistakes: ${problems.join('; and ')}`);
  if (typeof when === 'string') throw new Error('unreachable: a bad time is refused above');
  return { kind, ...aimed, when: when.text, pattern: when.pattern, ...(tz ? { tz } : {}) };
}

function targetNeeds(c: ScheduleCommand): Need[] {
  if (c.instance !== undefined) return lookupNeed(c.instance, 'listInstances', 'instance');
  return [{ requirement: 'listInstances', hint: 'Schedule one instance by its id instead of a tag.' }];
}

// The firing starts or stops the target; making the schedule changes no machine yet.
const scheduleEffects = (c: ScheduleCommand): Effects =>
  c.instance !== undefined ? { target: { instance: c.instance } } : c.tag ? { tag: c.tag } : {};

const describe = (action: string) => (c: ScheduleCommand) =>
  `/gpu schedule ${action} ${targetText(c)} ${c.when}${c.tz ? ` --tz ${c.tz}` : ''}`;

/**
 * A scheduled start is priced per hour like `/gpu start` (that figure meets the approval threshold),
 * with the month it can cost on the card: the hours from each start to the next stop of the stop
 * schedules on the same target, or, with none, the whole month (730 h): a started machine runs until
 * something stops it. docs/schedules.md.
 */
function scheduledStartCost(
  c: ScheduleCommand,
  { prices, targetType, stopSchedules = [] }: CostInput,
): CommandCost {
  const label = 'for each hour a machine it starts runs';
  if (c.tag) {
    const estimate: CostEstimate = {
      known: false,
      reason: `the machines tagged ${targetText(c)} are known only when it fires, so their price cannot be worked out now`,
    };
    return { estimate, adds: true, label };
  }
  if (!targetType) {
    const reason = `the type of ${c.instance} is not known yet, so its price cannot be worked out`;
    return { estimate: { known: false, reason }, adds: true, label };
  }
  const hourly = estimateMachines({ prices, type: targetType });
  if (!hourly.known) return { estimate: hourly, adds: true, label };
  // Without --tz the requester's zone is known only once the job runs: the stops' zone stands in.
  const tz = c.tz ?? stopSchedules[0]?.tz ?? 'UTC';
  const hours = runHoursPerMonth({ pattern: c.pattern, tz }, stopSchedules, Date.now()) ?? HOURS_PER_MONTH;
  const monthly = formatUsd(hourly.perHour * hours);
  const month =
    stopSchedules.length > 0
      ? `${c.when}, stopped by ${stopSchedules.map((s) => `${s.id} (${s.when} ${s.tz})`).join(', ')}: about ${hours} h ≈ ${monthly} a month`
      : `${c.when}: each start runs until something stops it, so up to ${HOURS_PER_MONTH} h ≈ ${monthly} a month (a stop schedule on ${targetText(c)} lowers it)`;
  return { estimate: { ...hourly, basis: `${hourly.basis}; ${month}` }, adds: true, label };
}

const NOTES =
  "A target is an instance name or id, or a tag written `key=value` (instance names cannot contain `=`): a tag is looked up each time the schedule fires, so it acts on every instance carrying the tag then that is yours (every one, for an admin). The time is `daily HH:MM`, `weekdays HH:MM`, `weekends HH:MM` or a five-field cron expression (minute hour day month weekday, such as `30 7 * * 1-5`), read in your Slack time zone (`--tz Europe/Berlin` to choose another); one that never fires or fires more often than every 10 minutes is refused. Making one needs the role of `/gpu stop` (or `start`) as well as its own. Each firing is a start or stop request as you, with your role checked again, posted to the channel the schedule was made in. A scheduled start of a costly type waits for an approval once, when it is made, and again at a firing that would start more than the machines it was made for; it gets the policy's lease like any start. A schedule whose owner is deactivated, a guest or of another workspace is paused; `/gpu schedules` lists the channel's schedules with their next run in your own time zone. docs/schedules.md.";

const scheduleStart = defineCommand({
  kind: 'schedule.start',
  group: 'instances',
  usage: '/gpu schedule start <instance|tag> <when> [--tz <zone>]',
  summary: 'start an instance (or every instance with a tag) at a time, every day or by cron',
  example: '/gpu schedule start train-01 weekdays 07:30',
  schema: scheduleCommand('schedule.start'),
  parse: (r) => readSchedule(r, 'schedule.start'),
  delivery: 'channel',
  operationClass: 'operate',
  actsAs: 'start',
  needs: ['startInstance'],
  needsFor: targetNeeds,
  effects: scheduleEffects,
  cost: scheduledStartCost,
  describe: describe('start'),
});

const scheduleStop = defineCommand({
  kind: 'schedule.stop',
  group: 'instances',
  usage: '/gpu schedule stop <instance|tag> <when> [--tz <zone>]',
  summary: 'stop an instance (or every instance with a tag) at a time, such as every weekday evening',
  example: '/gpu schedule stop team=ml weekdays 20:00',
  schema: scheduleCommand('schedule.stop'),
  parse: (r) => readSchedule(r, 'schedule.stop'),
  delivery: 'channel',
  operationClass: 'operate',
  actsAs: 'stop',
  needs: ['stopInstance'],
  needsFor: targetNeeds,
  effects: scheduleEffects,
  describe: describe('stop'),
  notes: NOTES,
});

const schedules = defineCommand({
  kind: 'schedules',
  group: 'instances',
  usage: '/gpu schedules',
  summary: "this channel's power schedules, with their next run in your time zone",
  example: '/gpu schedules',
  schema: simple('schedules'),
  parse(r: ArgReader) {
    r.nothing();
    return { kind: 'schedules' };
  },
  delivery: 'ephemeral',
  operationClass: 'read',
  needs: [],
});

const scheduleRm = defineCommand({
  kind: 'schedule.rm',
  group: 'instances',
  usage: '/gpu schedule rm <id>',
  summary: 'remove a power schedule of this channel; it does not fire again',
  example: '/gpu schedule rm s-3f9a2c',
  schema: onName('schedule.rm', 'id'),
  parse: (r) => ({ kind: 'schedule.rm', id: r.onlyName('the schedule id (see /gpu schedules)') }),
  refers: (c) => [{ what: 'schedule', ref: c.id }],
  delivery: 'channel',
  operationClass: 'operate',
  needs: [],
});

export const specs = [scheduleStart, scheduleStop, schedules, scheduleRm] as const;
export const synonyms: Readonly<Record<string, string>> = { timer: 'schedule', cron: 'schedule' };
