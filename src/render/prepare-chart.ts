import { guessStep } from './chart-format.js';
import { type ChartPoint, type ChartSeries, type ChartSpec, DEFAULT_MAX_SERIES } from './chart-spec.js';

// Everything the picture and the text fallback share: which series are shown, the runs of each line,
// the statistics, and the notes about what was left out.

export interface SeriesStats {
  /** Finite values counted. */
  readonly count: number;
  readonly min: number | null;
  readonly mean: number | null;
  readonly max: number | null;
  /** The latest finite value. */
  readonly last: number | null;
  /** NaN, +Inf and -Inf values found (not drawn, not counted). */
  readonly nan: number;
  readonly posInf: number;
  readonly negInf: number;
}

export interface PreparedSeries {
  readonly label: string;
  /** Position in the spec, so colours stay with a series whatever else is shown. */
  readonly index: number;
  /** Unbroken stretches of finite points; a gap longer than 1.5 steps or a non-finite value breaks them. */
  readonly runs: readonly (readonly ChartPoint[])[];
  readonly stats: SeriesStats;
}

export interface PreparedChart {
  readonly shown: readonly PreparedSeries[];
  readonly hidden: number;
  /** Value bounds of what is drawn, widened to the spec's natural bounds. Undefined with no data. */
  readonly lo: number | undefined;
  readonly hi: number | undefined;
  readonly stepMs: number | undefined;
  readonly hasData: boolean;
  /** Sentences for the reader: series left out, values skipped. */
  readonly notes: readonly string[];
}

export function statsOf(points: readonly ChartPoint[]): SeriesStats {
  let count = 0;
  let sum = 0;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  let last: number | null = null;
  let lastT = Number.NEGATIVE_INFINITY;
  let nan = 0;
  let posInf = 0;
  let negInf = 0;
  for (const p of points) {
    if (Number.isNaN(p.v)) nan++;
    else if (p.v === Number.POSITIVE_INFINITY) posInf++;
    else if (p.v === Number.NEGATIVE_INFINITY) negInf++;
    else {
      count++;
      sum += p.v;
      if (p.v < min) min = p.v;
      if (p.v > max) max = p.v;
      if (p.t >= lastT) {
        lastT = p.t;
        last = p.v;
      }
    }
  }
  return count === 0
    ? { count, min: null, mean: null, max: null, last: null, nan, posInf, negInf }
    : { count, min, mean: sum / count, max, last, nan, posInf, negInf };
}

function runsOf(points: readonly ChartPoint[], stepMs: number | undefined): ChartPoint[][] {
  const sorted = [...points].sort((a, b) => a.t - b.t);
  const runs: ChartPoint[][] = [];
  let current: ChartPoint[] = [];
  let prevT: number | undefined;
  for (const p of sorted) {
    if (!Number.isFinite(p.v)) {
      if (current.length > 0) runs.push(current);
      current = [];
      prevT = undefined;
      continue;
    }
    if (prevT !== undefined && stepMs !== undefined && p.t - prevT > stepMs * 1.5 && current.length > 0) {
      runs.push(current);
      current = [];
    }
    current.push(p);
    prevT = p.t;
  }
  if (current.length > 0) runs.push(current);
  return runs;
}

export function prepareChart(spec: ChartSpec): PreparedChart {
  const limit = Math.max(1, spec.maxSeries ?? DEFAULT_MAX_SERIES);
  const all = spec.series.map((s, index) => ({ series: s, index, stats: statsOf(s.points) }));
  let chosen = all;
  if (all.length > limit) {
    // Keep the busiest series: the highest means, series with no numbers last.
    chosen = [...all]
      .sort((a, b) => (b.stats.mean ?? Number.NEGATIVE_INFINITY) - (a.stats.mean ?? Number.NEGATIVE_INFINITY))
      .slice(0, limit)
      .sort((a, b) => a.index - b.index);
  }
  const hidden = all.length - chosen.length;
  const stepMs = spec.stepMs ?? guessStep(mergedTimes(chosen.map((c) => c.series)));
  const shown: PreparedSeries[] = chosen.map((c) => ({
    label: c.series.label,
    index: c.index,
    runs: runsOf(c.series.points, stepMs),
    stats: c.stats,
  }));
  let lo: number | undefined;
  let hi: number | undefined;
  for (const s of shown) {
    if (s.stats.min !== null) lo = lo === undefined ? s.stats.min : Math.min(lo, s.stats.min);
    if (s.stats.max !== null) hi = hi === undefined ? s.stats.max : Math.max(hi, s.stats.max);
  }
  const hasData = lo !== undefined && hi !== undefined;
  if (hasData) {
    if (spec.min !== undefined) lo = Math.min(lo!, spec.min);
    if (spec.max !== undefined) hi = Math.max(hi!, spec.max);
    if (spec.minSpan !== undefined && hi! - lo! < spec.minSpan) {
      const mid = (hi! + lo!) / 2;
      lo = mid - spec.minSpan / 2;
      hi = mid + spec.minSpan / 2;
      // Widening must not push the axis below a natural floor such as 0.
      if (spec.min !== undefined && lo < spec.min) {
        hi += spec.min - lo;
        lo = spec.min;
      }
    }
  }
  const notes: string[] = [];
  if (hidden > 0) {
    notes.push(`+${hidden} more series not shown (the ${chosen.length} with the highest mean are drawn)`);
  }
  const nan = shown.reduce((n, s) => n + s.stats.nan, 0);
  const posInf = shown.reduce((n, s) => n + s.stats.posInf, 0);
  const negInf = shown.reduce((n, s) => n + s.stats.negInf, 0);
  if (nan + posInf + negInf > 0) {
    const kinds = [
      nan > 0 ? `${nan} NaN` : '',
      posInf > 0 ? `${posInf} +Inf` : '',
      negInf > 0 ? `${negInf} -Inf` : '',
    ].filter((k) => k !== '');
    const total = nan + posInf + negInf;
    notes.push(`${total} value${total === 1 ? '' : 's'} skipped as not finite (${kinds.join(', ')})`);
  }
  return { shown, hidden, lo, hi, stepMs, hasData, notes };
}

function mergedTimes(series: readonly ChartSeries[]): number[] {
  // The step of the densest series is the query's step.
  let best: number[] = [];
  for (const s of series)
    if (s.points.length > best.length) best = s.points.map((p) => p.t).sort((a, b) => a - b);
  return best;
}
