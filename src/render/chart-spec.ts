// What a metric chart shows: the same spec gives the PNG and its text fallback, so both always agree.

export interface ChartPoint {
  /** Unix time in milliseconds. */
  readonly t: number;
  readonly v: number;
}

export interface ChartSeries {
  /** Legend text, e.g. "GPU 0". */
  readonly label: string;
  readonly points: readonly ChartPoint[];
}

export interface ChartSpec {
  /** e.g. "train-1 · GPU utilisation". */
  readonly title: string;
  /** Unit of the values, shown on the value axis and in the legend: %, GiB, W, °C. */
  readonly unit: string;
  /** The range asked for, in unix ms: the time axis always spans it, data or not. */
  readonly start: number;
  readonly end: number;
  /** Expected distance between points; a longer gap breaks the line. Guessed from the data when absent. */
  readonly stepMs?: number;
  readonly series: readonly ChartSeries[];
  /** Picture size in pixels; default 1000 × 560. */
  readonly width?: number;
  readonly height?: number;
  /** Most series drawn; the rest are left out, highest mean first. Default 8. */
  readonly maxSeries?: number;
  /** Natural bounds of the value axis (util: 0–100); the axis still widens to fit the data. */
  readonly min?: number;
  readonly max?: number;
  /** Smallest value-axis span, so a 1 °C wobble is not drawn as a cliff (temp: 20). */
  readonly minSpan?: number;
}

export const DEFAULT_WIDTH = 1000;
export const DEFAULT_HEIGHT = 560;
export const DEFAULT_MAX_SERIES = 8;
