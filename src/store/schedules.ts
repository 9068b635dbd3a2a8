import { z } from 'zod';
import type { Store } from './store.js';

// Scheduled power actions (`/gpu schedule start|stop`): what to do, to which instance or tag, when,
// in which time zone, for whom and where to report. The firing itself is a BullMQ job scheduler of the
// same id (src/watch/schedule-timers.ts); this is what the firing reads and what lists show.
//
// Keys (one hash tag, so the transaction stays in one Redis Cluster slot):
// <prefix>:{schedules}:all (hash id → JSON), …:channel:<channel> and …:user:<user> (sets of ids).

/** New ids have 12 hex digits; schedules made before that keep their 6. */
export const SCHEDULE_ID = /^s-[0-9a-f]{6,24}$/;

export const scheduleTargetSchema = z.union([
  /** The instance's id (names can be reused), and its name when the schedule was made, to show. */
  z.object({ instance: z.string().min(1), name: z.string().min(1) }),
  z.object({ tag: z.object({ key: z.string().min(1), value: z.string() }) }),
]);
export type ScheduleTarget = z.infer<typeof scheduleTargetSchema>;

export const scheduleSchema = z.object({
  id: z.string().regex(SCHEDULE_ID),
  action: z.enum(['start', 'stop']),
  target: scheduleTargetSchema,
  /** As typed and shown back: `weekdays 20:00`, or the cron expression. */
  when: z.string().min(1),
  /** Five-field cron pattern, read in `tz`. */
  pattern: z.string().min(1),
  /** IANA zone of the wall clock the pattern is read in: the owner's Slack zone or their --tz. */
  tz: z.string().min(1),
  /** Where it was made: firings report here. */
  channelId: z.string().min(1),
  projectId: z.string().min(1),
  /** Who made it: each firing acts as this person, whose role is checked again then. */
  ownerId: z.string().min(1),
  createdAt: z.number(),
  /** The approval a costly start had at creation. */
  approvalId: z.string().optional(),
  /** The request (job id) that made it: its retry may write the record again, nothing else may. */
  madeBy: z.string().optional(),
  /**
   * What a start schedule was agreed for when it was made: how many machines of each type its target
   * had then. A firing that would start more (priced with today's price list) asks an approver again.
   */
  ceiling: z
    .object({ machines: z.number().int().min(0), types: z.record(z.string(), z.number().int().min(1)) })
    .optional(),
  /** Set when a firing found its owner may no longer use gpuops: it fires no more, and says why. */
  paused: z.object({ at: z.number(), reason: z.string().max(300) }).optional(),
  /** The last firing: when and what came of it, in words. */
  lastRun: z.object({ at: z.number(), outcome: z.string().max(300) }).optional(),
});
export type Schedule = z.infer<typeof scheduleSchema>;

/** Whose schedules to list: a channel's (what `/gpu schedules` shows) or a person's (their Home tab). */
export type ScheduleFilter = { readonly channelId: string } | { readonly userId: string };

/** At most this many schedules per channel, so a list stays readable and a typo loop stays small. */
export const MAX_SCHEDULES_PER_CHANNEL = 50;

type StoreRef = Pick<Store, 'redis' | 'prefix'>;

const key = (prefix: string, ...parts: readonly string[]) => [prefix, '{schedules}', ...parts].join(':');
const allKey = (prefix: string) => key(prefix, 'all');
const channelKey = (prefix: string, channelId: string) => key(prefix, 'channel', channelId);
const userKey = (prefix: string, userId: string) => key(prefix, 'user', userId);

function read(raw: string | null | undefined): Schedule | undefined {
  if (!raw) return undefined;
  try {
    const parsed = scheduleSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

// KEYS: all, channel set, user set. ARGV: id, record, madeBy ('' for none).
// Writes unless the id holds another request's schedule: 1 written, 0 taken.
const SAVE_NEW = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current then
  local ok, held = pcall(cjson.decode, current)
  if ARGV[3] == '' or not ok or type(held) ~= 'table' or held.madeBy ~= ARGV[3] then return 0 end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('SADD', KEYS[3], ARGV[1])
return 1`;

/**
 * Stores a new schedule; false, and nothing written, when its id already holds another schedule (a
 * retried creation, same `madeBy`, writes its own record again). Never replaces someone else's.
 */
export async function saveSchedule(store: StoreRef, schedule: Schedule): Promise<boolean> {
  const valid = scheduleSchema.parse(schedule);
  const { redis, prefix } = store;
  const written = await redis.eval(
    SAVE_NEW,
    3,
    allKey(prefix),
    channelKey(prefix, valid.channelId),
    userKey(prefix, valid.ownerId),
    valid.id,
    JSON.stringify(valid),
    valid.madeBy ?? '',
  );
  return written === 1;
}

export async function getSchedule(store: StoreRef, id: string): Promise<Schedule | undefined> {
  return read(await store.redis.hget(allKey(store.prefix), id));
}

/** A channel's or a person's schedules, oldest first. */
export async function listSchedules(store: StoreRef, filter: ScheduleFilter): Promise<Schedule[]> {
  const { redis, prefix } = store;
  const setKey =
    'channelId' in filter ? channelKey(prefix, filter.channelId) : userKey(prefix, filter.userId);
  const ids = await redis.smembers(setKey);
  if (ids.length === 0) return [];
  const raws = await redis.hmget(allKey(prefix), ...ids);
  const stale = ids.filter((_, i) => raws[i] === null);
  if (stale.length > 0) await redis.srem(setKey, ...stale);
  return raws
    .flatMap((raw) => {
      const s = read(raw);
      return s ? [s] : [];
    })
    .sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
}

/** Every schedule, of every channel (the budget forecast follows them all). */
export async function allSchedules(store: StoreRef): Promise<Schedule[]> {
  const raws = await store.redis.hvals(allKey(store.prefix));
  return raws.flatMap((raw) => {
    const s = read(raw);
    return s ? [s] : [];
  });
}

/** The stop schedules of a channel on one target: an instance by name or id, or a tag. */
export async function stopSchedulesOn(
  store: StoreRef,
  channelId: string,
  target: {
    readonly instance?: string | undefined;
    readonly tag?: { readonly key: string; readonly value: string } | undefined;
  },
): Promise<Schedule[]> {
  const { instance, tag } = target;
  return (await listSchedules(store, { channelId })).filter((s) => {
    if (s.action !== 'stop') return false;
    const t = s.target;
    if ('tag' in t) return tag !== undefined && t.tag.key === tag.key && t.tag.value === tag.value;
    return instance !== undefined && (t.instance === instance || t.name === instance);
  });
}

/**
 * Removes a schedule; the removed record, or undefined when there was none (or it belongs to another
 * channel than `channelId`, when given). The caller removes its job scheduler too (ScheduleTimers);
 * a timer left behind removes itself at its next firing, without acting.
 */
export async function removeSchedule(
  store: StoreRef,
  id: string,
  only: { readonly channelId?: string } = {},
): Promise<Schedule | undefined> {
  const { redis, prefix } = store;
  const schedule = await getSchedule(store, id);
  if (!schedule || (only.channelId !== undefined && schedule.channelId !== only.channelId)) return undefined;
  const [[, removed] = [null, 0]] =
    (await redis
      .multi()
      .hdel(allKey(prefix), id)
      .srem(channelKey(prefix, schedule.channelId), id)
      .srem(userKey(prefix, schedule.ownerId), id)
      .exec()) ?? [];
  return removed === 1 ? schedule : undefined;
}

/** Pauses a schedule (it then fires nothing); nothing when it was removed meanwhile. */
export async function pauseSchedule(
  store: StoreRef,
  id: string,
  paused: { readonly at: number; readonly reason: string },
): Promise<void> {
  const schedule = await getSchedule(store, id);
  if (!schedule) return;
  await writeIfExists(store, { ...schedule, paused: { at: paused.at, reason: paused.reason.slice(0, 300) } });
}

async function writeIfExists(store: StoreRef, updated: Schedule): Promise<void> {
  // Only if it still exists: a removal between the read and this write must win.
  await store.redis.eval(
    "if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end",
    1,
    allKey(store.prefix),
    updated.id,
    JSON.stringify(updated),
  );
}

/** Records what the last firing did, for the list; nothing when the schedule was removed meanwhile. */
export async function recordScheduleRun(
  store: StoreRef,
  id: string,
  run: { readonly at: number; readonly outcome: string },
): Promise<void> {
  const schedule = await getSchedule(store, id);
  if (!schedule) return;
  await writeIfExists(store, { ...schedule, lastRun: { at: run.at, outcome: run.outcome.slice(0, 300) } });
}
