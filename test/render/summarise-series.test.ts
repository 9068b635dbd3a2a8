import { describe, expect, it } from 'vitest';
import {
  formatDuration,
  formatRange,
  formatValue,
  niceTicks,
  timeTicks,
} from '../../src/render/chart-format.js';
import { renderSummaryText, SPARK_CHARS, summariseSeries } from '../../src/render/summarise-series.js';

const START = Date.UTC(2024, 4, 1, 10, 0, 0);
const MIN = 60_000;

describe('text summary of a chart', () => {
  it('gives min, mean, max and last per series from the data', () => {
    const [a, b] = summariseSeries([
      {
        label: 'GPU 0',
        points: [
          { t: START + 2 * MIN, v: 30 },
          { t: START, v: 10 },
          { t: START + MIN, v: 20 },
        ],
      },
      {
        label: 'GPU 1',
        points: [
          { t: START, v: 50 },
          { t: START + MIN, v: Number.NaN },
        ],
      },
    ]);
    expect(a).toMatchObject({ label: 'GPU 0', count: 3, min: 10, mean: 20, max: 30, last: 30, skipped: 0 });
    expect(b).toMatchObject({ label: 'GPU 1', count: 1, min: 50, mean: 50, max: 50, last: 50, skipped: 1 });
  });

  it('draws a sparkline on one scale for all series, with blanks where data is missing', () => {
    const points = (values: Array<number | null>) =>
      values.flatMap((v, i) => (v === null ? [] : [{ t: START + i * MIN, v }]));
    const [rise, flat] = summariseSeries(
      [
        { label: 'a', points: points([0, 1, 2, 3, 4, 5, 6, 7]) },
        { label: 'b', points: points([7, 7, null, null, 7, 7, 7, 7]) },
      ],
      { width: 8, start: START, end: START + 8 * MIN - 1 },
    );
    expect(rise!.sparkline).toBe(SPARK_CHARS);
    expect(flat!.sparkline).toBe('██  ████');
  });

  it('writes the title, the range, one line per series and the notes', () => {
    const series = Array.from({ length: 10 }, (_, g) => ({
      label: `GPU ${g}`,
      points: [
        { t: START, v: g * 10 },
        { t: START + 30 * MIN, v: g * 10 + 5 },
        { t: START + 60 * MIN, v: g * 10 + 1 },
      ],
    }));
    const text = renderSummaryText({
      title: 'train-1 · GPU utilisation',
      unit: '%',
      start: START,
      end: START + 60 * MIN,
      stepMs: 30 * MIN,
      series,
      maxSeries: 3,
      min: 0,
      max: 100,
    });
    const lines = text.split('\n');
    expect(lines[0]).toBe('train-1 · GPU utilisation (%), 2024-05-01 10:00 – 11:00 UTC (1h)');
    expect(lines.slice(1, 4).map((l) => l.split(/\s+/)[1])).toEqual(['7', '8', '9']);
    expect(lines[3]).toMatch(/^GPU 9 {2}\S.* {2}min 90 {2}mean 92 {2}max 95 {2}last 91 %$/);
    expect(lines[4]).toBe('+7 more series not shown (the 3 with the highest mean are drawn)');
  });
});

describe('chart formatting', () => {
  it('formats values, durations and ranges as people read them', () => {
    expect([
      formatValue(93),
      formatValue(7.5),
      formatValue(0.4219),
      formatValue(1234.6),
      formatValue(-0.001),
    ]).toEqual(['93', '7.5', '0.42', '1235', '0']);
    expect([
      formatDuration(3_600_000),
      formatDuration(5_400_000),
      formatDuration(86_400_000),
      formatDuration(45_000),
    ]).toEqual(['1h', '1h 30m', '1d', '45s']);
    expect(formatRange(START, START + 86_400_000)).toBe('2024-05-01 10:00 – 2024-05-02 10:00 UTC (1d)');
  });

  it('puts ticks on round values and round UTC times', () => {
    expect(niceTicks(0, 100, 5).ticks).toEqual([0, 20, 40, 60, 80, 100]);
    expect(niceTicks(61.3, 77.9, 4).ticks).toEqual([60, 65, 70, 75, 80]);
    expect(niceTicks(5, 5).ticks.length).toBeGreaterThan(1);
    expect(timeTicks(START + 7 * MIN, START + 67 * MIN, 6).map((t) => t.label)).toEqual([
      '10:10',
      '10:20',
      '10:30',
      '10:40',
      '10:50',
      '11:00',
    ]);
  });
});
