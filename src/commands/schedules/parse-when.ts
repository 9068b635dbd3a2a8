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

/** `20:00`, `7:30`, `09.15` or `20h00` (as typed; the hour and minute are checked apart). */
const CLOCK = /^(\d{1,2})[:.h](\d{2})$/;

/** Why `typed` is not a time of day on a 24-hour clock (the part out of range named), with a fix. */
function timeOfDayProblem(typed: string, days: string): { why: string; fix: string } | undefined {
  const m = CLOCK.exec(typed);
  if (!m) {
    const ampm = /^(\d{1,2})(?::(\d{2}))?\s*([ap])\.?m\.?$/i.exec(typed);
    const hour = ampm ? Number(ampm[1]) : 0;
    const fix =
      ampm && hour >= 1 && hour <= 12
        ? `${String((hour % 12) + (ampm[3]!.toLowerCase() === 'p' ? 12 : 0)).padStart(2, '0')}:${ampm[2] ?? '00'}`
        : '20:00';
    return { why: 'it is not HH:MM on a 24-hour clock', fix: `${days} ${fix}` };
  }
  const [hour, minute] = [Number(m[1]), Number(m[2])];
  if (hour > 23) return { why: `${hour} is not an hour (00 to 23)`, fix: `${days} 23:${m[2]}` };
  if (minute > 59)
    return { why: `${m[2]} is not a minute (00 to 59)`, fix: `${days} ${m[1]!.padStart(2, '0')}:30` };
  return undefined;
}

/** A reason the words are not a schedule, or the schedule. Throws nothing. */
export function parseWhen(words: readonly string[]): When | string {
  // `"0 20 * * 1-5"` typed in quotes arrives as one word.
  const parts = words.flatMap((w) => w.trim().split(/\s+/)).filter((w) => w.length > 0);
  if (parts.length === 0) {
    return `a schedule needs a time after its target, such as \`weekdays 20:00\`: ${WHEN_RULE}`;
  }
  const first = parts[0]!.toLowerCase();
  if (Object.hasOwn(DAYS, first)) {
    const days = DAYS[first as keyof typeof DAYS];
    if (parts.length !== 2) return `\`${first}\` takes one time of day after it, such as \`${first} 20:00\``;
    const problem = timeOfDayProblem(parts[1]!, first);
    if (problem !== undefined) {
      return `\`${parts[1]}\` is not a time of day: ${problem.why}; write it as \`${problem.fix}\`, for example`;
    }
    const m = CLOCK.exec(parts[1]!)!;
    const hour = Number(m[1]);
    const minute = Number(m[2]);
    const text = `${first} ${String(hour).padStart(2, '0')}:${m[2]}`;
    return { text, pattern: `${minute} ${hour} * * ${days}` };
  }
  if (parts.length === 1 && (CLOCK.test(first) || /^\d{1,2}(?::\d{2})?\s*[ap]\.?m\.?$/.test(first))) {
    // A bare time: it needs its days in front, and may be out of range as well.
    const problem = timeOfDayProblem(parts[0]!, 'daily');
    return problem !== undefined
      ? `\`${parts[0]}\` is not a schedule: ${problem.why}, and a time needs its days in front, such as \`${problem.fix}\``
      : `\`${parts[0]}\` needs the days it is for in front: \`daily ${parts[0]}\`, \`weekdays ${parts[0]}\` or \`weekends ${parts[0]}\``;
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
