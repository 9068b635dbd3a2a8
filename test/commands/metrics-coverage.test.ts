import { describe, expect, it } from 'vitest';
import { coverageNote } from '../../src/commands/metrics/handlers.js';
import type { ChartSpec } from '../../src/render/chart-spec.js';

// A machine started minutes ago, charted over the default hour: the answer says how little of the
// hour has data and which range shows it, instead of an almost empty chart without a word.

const END = Date.UTC(2026, 10, 25, 12, 0);
const HOUR = 3_600_000;

function spec(firstMinutesAgo: number): ChartSpec {
  const points = [];
  for (let t = END - HOUR; t <= END; t += 60_000) {
    points.push({ t, v: t >= END - firstMinutesAgo * 60_000 ? 42 : Number.NaN });
  }
  return { title: 'GPU utilisation', unit: '%', series: [{ label: 'gpu0', points }] } as unknown as ChartSpec;
}

describe('the metrics chart over a range mostly without data', () => {
  it('says how much of the range has data and suggests a range that shows it', () => {
    expect(coverageNote(spec(6), HOUR, END, { instance: 'demo-1' })).toBe(
      'Data covers only the last 6m of the 1h asked for (there is none before): `/gpu metrics demo-1 --range 15m` shows it in more detail.',
    );
  });

  it('says nothing when the data fills a fair part of the range, or there is none at all', () => {
    expect(coverageNote(spec(30), HOUR, END, { instance: 'demo-1' })).toBeUndefined();
    expect(coverageNote(spec(-1), HOUR, END, { instance: 'demo-1' })).toBeUndefined();
  });
});
