import { formatRange, formatValue, withUnit } from './chart-format.js';
import type { ChartSeries, ChartSpec } from './chart-spec.js';
import { prepareChart, statsOf } from './prepare-chart.js';

// The chart as text: per series min / mean / max / last and a sparkline, for the message's text
// fallback and for screen readers.

export const SPARK_CHARS = '▁▂▃▄▅▆▇█';

export interface SeriesSummary {
  readonly label: string;
  /** Finite values counted. */
  readonly count: number;
  readonly min: number | null;
  readonly mean: number | null;
  readonly max: number | null;
  readonly last: number | null;
  /** NaN and ±Inf values left out of the numbers. */
  readonly skipped: number;
  readonly sparkline: string;
}

export interface SummaryOptions {
  /** Time span the sparkline covers (ms); default the data's own first and last times. */
  readonly start?: number;
  readonly end?: number;
  /** Characters in the sparkline; default 24. */
  readonly width?: number;
  /** Value scale of the sparkline; default the lowest and highest value over all the series, so they compare. */
  readonly lo?: number;
  readonly hi?: number;
}

export function summariseSeries(
  series: readonly ChartSeries[],
  options: SummaryOptions = {},
): SeriesSummary[] {
  const stats = series.map((s) => statsOf(s.points));
  let lo = options.lo;
  let hi = options.hi;
  let start = options.start;
  let end = options.end;
  for (const [i, s] of series.entries()) {
    const st = stats[i]!;
    if (st.min !== null) lo = Math.min(lo ?? st.min, st.min);
    if (st.max !== null) hi = Math.max(hi ?? st.max, st.max);
    for (const p of s.points) {
      if (options.start === undefined) start = Math.min(start ?? p.t, p.t);
      if (options.end === undefined) end = Math.max(end ?? p.t, p.t);
    }
  }
  const width = Math.max(1, options.width ?? 24);
  return series.map((s, i) => {
    const st = stats[i]!;
    return {
      label: s.label,
      count: st.count,
      min: st.min,
      mean: st.mean,
      max: st.max,
      last: st.last,
      skipped: st.nan + st.posInf + st.negInf,
      sparkline: sparkline(s, start ?? 0, end ?? 0, width, lo ?? 0, hi ?? 0),
    };
  });
}

/** One character per time bucket (its mean), a space where the bucket holds no number. */
export function sparkline(
  series: ChartSeries,
  start: number,
  end: number,
  width: number,
  lo: number,
  hi: number,
): string {
  const sums = new Array<number>(width).fill(0);
  const counts = new Array<number>(width).fill(0);
  const span = end - start;
  for (const p of series.points) {
    if (!Number.isFinite(p.v) || p.t < start || p.t > end) continue;
    const bucket = span <= 0 ? 0 : Math.min(width - 1, Math.floor(((p.t - start) / span) * width));
    sums[bucket]! += p.v;
    counts[bucket]!++;
  }
  let out = '';
  for (let i = 0; i < width; i++) {
    if (counts[i] === 0) {
      out += ' ';
      continue;
    }
    const mean = sums[i]! / counts[i]!;
    const level = hi > lo ? Math.round(((mean - lo) / (hi - lo)) * (SPARK_CHARS.length - 1)) : 0;
    out += SPARK_CHARS[Math.max(0, Math.min(SPARK_CHARS.length - 1, level))];
  }
  // A series with no data at all still gets a visible placeholder.
  return out.trim() === '' ? '(no data)' : out;
}

/**
 * The text twin of renderChartSvg: title, range, one line per drawn series, and the same notes.
 * Lines are plain text; the caller puts them in a code block or not.
 */
export function renderSummaryText(spec: ChartSpec): string {
  const chart = prepareChart(spec);
  const lines = [`${spec.title}${spec.unit ? ` (${spec.unit})` : ''}, ${formatRange(spec.start, spec.end)}`];
  if (!chart.hasData) {
    lines.push(`No data for ${formatRange(spec.start, spec.end)}.`);
    return lines.join('\n');
  }
  const drawn = chart.shown.map((s) => spec.series[s.index]!);
  const summaries = summariseSeries(drawn, {
    start: spec.start,
    end: spec.end,
    ...(chart.lo !== undefined ? { lo: chart.lo } : {}),
    ...(chart.hi !== undefined ? { hi: chart.hi } : {}),
  });
  const labelWidth = Math.max(...summaries.map((s) => s.label.length));
  for (const s of summaries) {
    const n = (v: number | null) => (v === null ? '–' : formatValue(v));
    lines.push(
      `${s.label.padEnd(labelWidth)}  ${s.sparkline}  min ${n(s.min)}  mean ${n(s.mean)}  max ${n(s.max)}  last ${withUnit(n(s.last), spec.unit)}`,
    );
  }
  lines.push(...chart.notes);
  return lines.join('\n');
}
