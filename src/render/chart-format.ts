// Number, time and scale helpers shared by the chart and its text summary. All times are UTC.

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** A value as people read it: 3 significant-ish digits, no trailing zeros (93, 7.5, 0.42). */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  const abs = Math.abs(value);
  const decimals = abs >= 100 ? 0 : abs >= 10 ? 1 : 2;
  const text = value.toFixed(decimals);
  const trimmed = text.includes('.') ? text.replace(/\.?0+$/, '') : text;
  return trimmed === '-0' ? '0' : trimmed;
}

/** Value with its unit: "93 %", "41.5 GiB", "62 °C". */
export function withUnit(value: string, unit: string): string {
  return unit === '' ? value : `${value} ${unit}`;
}

/** 2024-05-01 10:00 (UTC), seconds shown only when not zero. */
export function formatDateTime(ms: number): string {
  const iso = new Date(ms).toISOString();
  const seconds = iso.slice(17, 19);
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)}${seconds === '00' ? '' : `:${seconds}`}`;
}

/** 1h, 15m, 1h 30m, 2d, 45s. */
export function formatDuration(ms: number): string {
  if (ms <= 0) return '0s';
  const parts: string[] = [];
  let rest = Math.round(ms / SECOND);
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) parts.push(`${n}${unit}`);
    rest -= n * size;
  }
  return parts.slice(0, 2).join(' ');
}

/** "2024-05-01 10:00 – 11:00 UTC (1h)": the range a chart covers, stated in full. */
export function formatRange(start: number, end: number): string {
  const a = formatDateTime(start);
  const b = formatDateTime(end);
  const sameDay = a.slice(0, 10) === b.slice(0, 10);
  return `${a} – ${sameDay ? b.slice(11) : b} UTC (${formatDuration(end - start)})`;
}

/** Round ticks (1, 2, 2.5, 5 × 10^k) covering [lo, hi], about `count` of them. */
export function niceTicks(
  lo: number,
  hi: number,
  count = 5,
): { ticks: number[]; step: number; lo: number; hi: number } {
  let low = lo;
  let high = hi;
  if (!(high > low)) {
    const pad = Math.abs(low) > 0 ? Math.abs(low) * 0.1 : 1;
    low -= pad;
    high += pad;
  }
  const raw = (high - low) / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 2.5, 5, 10].find((m) => m * magnitude >= raw) ?? 10) * magnitude;
  const first = Math.floor(low / step + 1e-9) * step;
  const last = Math.ceil(high / step - 1e-9) * step;
  const ticks: number[] = [];
  for (let v = first; v <= last + step / 2; v += step) ticks.push(Number(v.toPrecision(12)));
  return { ticks, step, lo: first, hi: last };
}

const TIME_STEPS = [
  SECOND,
  5 * SECOND,
  10 * SECOND,
  15 * SECOND,
  30 * SECOND,
  MINUTE,
  2 * MINUTE,
  5 * MINUTE,
  10 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  HOUR,
  2 * HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  DAY,
  2 * DAY,
  7 * DAY,
];

/** Time ticks on round UTC boundaries inside [start, end], about `count` of them, with their labels. */
export function timeTicks(start: number, end: number, count = 6): Array<{ t: number; label: string }> {
  const span = Math.max(end - start, SECOND);
  const step = TIME_STEPS.find((s) => span / s <= count) ?? 7 * DAY;
  const ticks: Array<{ t: number; label: string }> = [];
  for (let t = Math.ceil(start / step) * step; t <= end; t += step) {
    const iso = new Date(t).toISOString();
    let label: string;
    if (step >= DAY) label = iso.slice(5, 10);
    else if (span > DAY) label = `${iso.slice(5, 10)} ${iso.slice(11, 16)}`;
    else if (step < MINUTE) label = iso.slice(11, 19);
    else label = iso.slice(11, 16);
    ticks.push({ t, label });
  }
  return ticks;
}

/** The usual distance between points, for series without a stated step. */
export function guessStep(times: readonly number[]): number | undefined {
  const diffs: number[] = [];
  for (let i = 1; i < times.length; i++) {
    const d = times[i]! - times[i - 1]!;
    if (d > 0) diffs.push(d);
  }
  if (diffs.length === 0) return undefined;
  diffs.sort((a, b) => a - b);
  return diffs[Math.floor(diffs.length / 2)];
}
