// `<!date^SECONDS^FORMAT|fallback>` drawn as Slack draws it for one reader: the tokens of FORMAT
// filled in in the reader's time zone, with Today, Yesterday and Tomorrow for the "pretty" ones.

const DAY_MS = 86_400_000;

function parts(ms: number, timeZone: string): Record<string, string> {
  const out: Record<string, string> = {};
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone,
    year: 'numeric',
    month: 'long',
    day: 'numeric',
    weekday: 'long',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  });
  for (const p of format.formatToParts(new Date(ms))) out[p.type] = p.value;
  return out;
}

const dayKey = (p: Record<string, string>) => `${p.year}-${p.month}-${p.day}`;

function ordinal(day: string): string {
  const n = Number(day);
  const suffix =
    n % 10 === 1 && n !== 11
      ? 'st'
      : n % 10 === 2 && n !== 12
        ? 'nd'
        : n % 10 === 3 && n !== 13
          ? 'rd'
          : 'th';
  return `${n}${suffix}`;
}

function relativeDay(ms: number, now: number, timeZone: string): string | undefined {
  const key = dayKey(parts(ms, timeZone));
  if (key === dayKey(parts(now, timeZone))) return 'Today';
  if (key === dayKey(parts(now - DAY_MS, timeZone))) return 'Yesterday';
  if (key === dayKey(parts(now + DAY_MS, timeZone))) return 'Tomorrow';
  return undefined;
}

/**
 * The text of a Slack date for a reader in `timeZone`; undefined when `inner` (what is between `<`
 * and `|`) is not a date, so the caller shows the fallback.
 */
export function slackDateText(inner: string, timeZone: string, now: number): string | undefined {
  const m = /^!date\^(\d+)\^([^^]*)/.exec(inner);
  if (!m) return undefined;
  const ms = Number(m[1]) * 1000;
  const p = parts(ms, timeZone);
  const month = p.month ?? '';
  const short = month.slice(0, 3);
  const tokens: Record<string, () => string> = {
    // en-CA writes dates as YYYY-MM-DD.
    date_num: () => new Intl.DateTimeFormat('en-CA', { timeZone }).format(new Date(ms)),
    date: () => `${month} ${ordinal(p.day ?? '')}, ${p.year}`,
    date_short: () => `${short} ${p.day}, ${p.year}`,
    date_long: () => `${p.weekday}, ${month} ${ordinal(p.day ?? '')}, ${p.year}`,
    date_pretty: () => relativeDay(ms, now, timeZone) ?? tokens.date!(),
    date_short_pretty: () => relativeDay(ms, now, timeZone) ?? tokens.date_short!(),
    date_long_pretty: () => relativeDay(ms, now, timeZone) ?? tokens.date_long!(),
    time: () => `${p.hour}:${p.minute}`,
    time_secs: () => `${p.hour}:${p.minute}:${p.second}`,
  };
  return (m[2] ?? '').replace(/\{([a-z_]+)\}/g, (all, token: string) => tokens[token]?.() ?? all);
}
