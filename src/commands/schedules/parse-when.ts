import { CronExpressionParser } from 'cron-parser';

// The `<when>` of `/gpu schedule start|stop`: `daily 07:30`, `weekdays 20:00`, `weekends 09:00` or a
// five-field cron expression, turned into one cron pattern. The time zone is not part of it: the
// schedule keeps the requester's Slack zone (users.info) or `--tz`. Pure; docs/schedules.md.

export interface When {
  /** As it is shown back: `weekdays 20:00`, or the cron expression. */
  readonly text: string;
  /** Five fields (minute hour day-of-month month day-of-week), as BullMQ's job schedulers take it. */
  readonly pattern: string;
}

export const WHEN_RULE =
  'a time is `daily HH:MM`, `weekdays HH:MM`, `weekends HH:MM` or a cron expression of five fields (minute hour day month weekday), such as `0 20 * * 1-5`';

/** Firings closer together than this are refused: a machine started and stopped every few minutes is a mistake. */
export const MIN_GAP_MINUTES = 10;
/** How many firings the gap is checked over: too-frequent firings come in clusters, and this stays cheap. */
const GAP_CHECKED = 12;

const DAYS = { daily: '*', weekdays: '1-5', weekends: '0,6' } as const;

/** A reason the words are not a schedule, or the schedule. Throws nothing. */
export function parseWhen(words: readonly string[]): When | string {
  // `"0 20 * * 1-5"` typed in quotes arrives as one word.
  const parts = words.flatMap((w) => w.trim().split(/\s+/)).filter((w) => w.length > 0);
  if (parts.length === 0) return `it needs a time: ${WHEN_RULE}`;
  const first = parts[0]!.toLowerCase();
  if (Object.hasOwn(DAYS, first)) {
    const days = DAYS[first as keyof typeof DAYS];
    if (parts.length !== 2) return `\`${first}\` takes one time of day, such as \`${first} 20:00\``;
    const m = /^([01]?[0-9]|2[0-3])[:.h]([0-5][0-9])$/.exec(parts[1]!);
    if (!m) {
      return `\`${parts[1]}\` is not a time of day: write it as HH:MM on a 24-hour clock, such as 07:30 or 20:00`;
    }
    const hour = Number(m[1]);
    const minute = Number(m[2]);
    const text = `${first} ${String(hour).padStart(2, '0')}:${m[2]}`;
    return { text, pattern: `${minute} ${hour} * * ${days}` };
  }
  if (parts.length !== 5) {
    return parts.length === 6
      ? 'a cron expression here has five fields (minute hour day month weekday); a seconds field is not taken'
      : `\`${parts.join(' ')}\` is not a schedule: ${WHEN_RULE}`;
  }
  const pattern = parts.join(' ');
  const problem = cronProblem(pattern);
  return problem ?? { text: pattern, pattern };
}

/** Why a five-field pattern cannot be a schedule (bad field, never fires, fires too often), else undefined. */
export function cronProblem(pattern: string): string | undefined {
  let runs: Date[];
  try {
    runs = nextRuns(pattern, 'UTC', Date.now(), GAP_CHECKED);
  } catch (err) {
    const reason = (err as Error).message;
    // cron-parser refuses a day that no month it names has (`30 2`) with this sentence.
    if (/explicit day of month/i.test(reason)) return neverFires(pattern);
    return `\`${pattern}\` is not a cron expression gpuops can read (${reason}): ${WHEN_RULE}`;
  }
  if (runs.length === 0) return neverFires(pattern);
  for (let i = 1; i < runs.length; i++) {
    if (runs[i]!.getTime() - runs[i - 1]!.getTime() < MIN_GAP_MINUTES * 60_000) {
      return `\`${pattern}\` fires more often than every ${MIN_GAP_MINUTES} minutes; a power schedule fires at most a few times a day`;
    }
  }
  return undefined;
}

function neverFires(pattern: string): string {
  return `\`${pattern}\` never fires: no date matches it (such as the 30th of February); check the day and month fields`;
}

/** The IANA zone this Node knows by that name, spelt canonically (`europe/berlin` → `Europe/Berlin`), else undefined. */
export function canonicalTimeZone(tz: string): string | undefined {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/.test(tz)) return undefined;
  try {
    return new Intl.DateTimeFormat('en-GB', { timeZone: tz }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

export const TIME_ZONE_RULE =
  'a time zone is an IANA name such as Europe/Berlin, America/New_York, Asia/Tokyo or UTC';

/**
 * The next `count` firings of `pattern` in `tz` after `after` (ms), DST included: `20:00` stays 20:00
 * on the wall clock. Fewer when it stops firing; throws on a pattern cron-parser cannot read.
 */
export function nextRuns(pattern: string, tz: string, after: number, count: number): Date[] {
  const expression = CronExpressionParser.parse(pattern, { tz, currentDate: new Date(after) });
  const runs: Date[] = [];
  for (let i = 0; i < count && expression.hasNext(); i++) runs.push(expression.next().toDate());
  return runs;
}

/** The next firing, or undefined when there is none (or the pattern cannot be read). */
export function nextRun(pattern: string, tz: string, after: number): Date | undefined {
  try {
    return nextRuns(pattern, tz, after, 1)[0];
  } catch {
    return undefined;
  }
}

/** `Thu 26 Nov, 20:00` in `tz`, for lists (each viewer gets their own zone). */
export function formatInZone(at: Date | number, tz: string): string {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: tz,
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(at);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${get('weekday')} ${get('day')} ${get('month')}, ${get('hour')}:${get('minute')}`;
}

/** A month, for what a schedule costs: 365.25 × 24 / 12 hours. */
export const HOURS_PER_MONTH = 730;
const MONTH_MS = HOURS_PER_MONTH * 3_600_000;
/** Start firings looked at for a month's estimate; a denser schedule is scaled up from these. */
const ESTIMATED_FIRINGS = 40;
/** Stop firings read ahead per stop schedule; beyond them each is asked for separately. */
const STOPS_READ = 200;

/**
 * How many hours a month a machine started by `start` runs, when the `stops` (schedules on the same
 * machine) stop it: from each start to the first stop after it, or on to the next start when no stop
 * comes first. With no stops, the whole month (730 h). Counted over the month from the first start
 * after `from`; undefined when the start never fires.
 */
export function runHoursPerMonth(
  start: { readonly pattern: string; readonly tz: string },
  stops: readonly { readonly pattern: string; readonly tz: string }[],
  from: number,
): number | undefined {
  let starts: number[];
  try {
    starts = nextRuns(start.pattern, start.tz, from - 1, ESTIMATED_FIRINGS + 1).map((d) => d.getTime());
  } catch {
    return undefined;
  }
  const first = starts[0];
  if (first === undefined) return undefined;
  const end = first + MONTH_MS;
  starts = starts.filter((t) => t < end);
  const counted = starts.slice(0, ESTIMATED_FIRINGS);
  // Each stop schedule's firings, read once; a start past the ones read asks that schedule itself.
  const stopRuns = stops.map((s) => {
    try {
      return { s, runs: nextRuns(s.pattern, s.tz, first, STOPS_READ).map((d) => d.getTime()) };
    } catch {
      return { s, runs: [] };
    }
  });
  const stopAfter = (at: number): number =>
    Math.min(
      ...stopRuns.map(({ s, runs }) => {
        const known = runs.find((t) => t > at);
        if (known !== undefined || runs.length < STOPS_READ) return known ?? end;
        return nextRun(s.pattern, s.tz, at)?.getTime() ?? end;
      }),
    );
  let running = 0;
  for (let i = 0; i < counted.length; i++) {
    const at = counted[i]!;
    running += Math.min(stopAfter(at), starts[i + 1] ?? end, end) - at;
  }
  // A schedule denser than the firings looked at: what they cover, scaled to the month.
  const covered = (starts[counted.length] ?? end) - first;
  return Math.round((running * (MONTH_MS / covered)) / 3_600_000);
}
