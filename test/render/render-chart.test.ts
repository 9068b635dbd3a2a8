import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ChartSeries, ChartSpec } from '../../src/render/chart-spec.js';
import { renderChartPng } from '../../src/render/render-chart-png.js';
import { renderChartSvg, SERIES_COLOURS } from '../../src/render/render-chart-svg.js';
import { renderSummaryText } from '../../src/render/summarise-series.js';
import { findChartFonts } from '../../src/sys/fonts.js';
import { countColour, countInk, decodePng, pngHeader } from '../support/png.js';

const fonts = (() => {
  const found = findChartFonts();
  return { fontFiles: found.files, fontFamily: found.family };
})();

const END = Date.UTC(2024, 4, 1, 11, 0, 0);
const START = END - 3_600_000;
const STEP = 15_000;

function wave(gpu: number, skip?: (t: number) => boolean): ChartSeries {
  const points = [];
  for (let t = START; t <= END; t += STEP) {
    if (skip?.(t)) continue;
    points.push({ t, v: 60 + gpu * 4 + 10 * Math.sin((t - START) / 300_000 + gpu) });
  }
  return { label: `GPU ${gpu}`, points };
}

function spec(series: ChartSeries[], extra: Partial<ChartSpec> = {}): ChartSpec {
  return {
    title: 'train-1 · GPU utilisation',
    unit: '%',
    start: START,
    end: END,
    stepMs: STEP,
    series,
    min: 0,
    max: 100,
    ...extra,
  };
}

/** The awkward pictures are written here when GPUOPS_KEEP_PNG is set, to look at them. */
function keep(name: string, png: Buffer) {
  if (process.env.GPUOPS_KEEP_PNG) writeFileSync(`${process.env.GPUOPS_KEEP_PNG}/${name}.png`, png);
}

describe('metric chart PNG', () => {
  it('draws an hour of 8 GPUs as a PNG of the stated size that is not blank', () => {
    const chart = spec(Array.from({ length: 8 }, (_, g) => wave(g)));
    const png = renderChartPng(chart, fonts);
    keep('eight-gpus', png);
    expect(pngHeader(png)).toEqual({ width: 1000, height: 560 });
    const image = decodePng(png);
    expect([image.width, image.height]).toEqual([1000, 560]);
    expect(countInk(image.pixels)).toBeGreaterThan(20_000);
    for (const colour of SERIES_COLOURS.slice(0, 8))
      expect(countColour(image.pixels, colour)).toBeGreaterThan(300);
    const svg = renderChartSvg(chart);
    expect(svg).toContain('2024-05-01 10:00 – 11:00 UTC (1h)');
    expect(svg).toContain('>100 %<');
    expect(svg).toContain('>10:30<');
    for (let g = 0; g < 8; g++) expect(svg).toContain(`>GPU ${g} <tspan`);
  });

  it('keeps the size it is asked for', () => {
    const png = renderChartPng(spec([wave(0)], { width: 640, height: 360 }), fonts);
    expect(pngHeader(png)).toEqual({ width: 640, height: 360 });
  });

  it('says there is no data for the range instead of drawing empty axes', () => {
    const chart = spec([]);
    const svg = renderChartSvg(chart);
    expect(svg).toContain('No data for 2024-05-01 10:00 – 11:00 UTC (1h)');
    const png = renderChartPng(chart, fonts);
    keep('no-data', png);
    expect(countInk(decodePng(png).pixels)).toBeGreaterThan(1000);
    expect(renderSummaryText(chart)).toContain('No data for 2024-05-01 10:00 – 11:00 UTC (1h).');
    expect(renderChartSvg(spec([{ label: 'GPU 0', points: [{ t: START, v: Number.NaN }] }]))).toContain(
      'No data for',
    );
  });

  it('draws a single point as a dot', () => {
    const chart = spec([{ label: 'GPU 0', points: [{ t: START + 1_800_000, v: 42 }] }]);
    const svg = renderChartSvg(chart);
    expect(svg.match(/<circle /g)).toHaveLength(1);
    expect(svg).not.toMatch(/<path d=/);
    const png = renderChartPng(chart, fonts);
    keep('single-point', png);
    expect(countColour(decodePng(png).pixels, SERIES_COLOURS[0])).toBeGreaterThan(20);
  });

  it('breaks the line where steps are missing', () => {
    const gap = (t: number) => t > START + 1_200_000 && t < START + 1_800_000;
    const svg = renderChartSvg(spec([wave(0, gap), wave(1)]));
    expect(svg.match(new RegExp(`<path d="[^"]+" stroke="${SERIES_COLOURS[0]}"`, 'g'))).toHaveLength(2);
    expect(svg.match(new RegExp(`<path d="[^"]+" stroke="${SERIES_COLOURS[1]}"`, 'g'))).toHaveLength(1);
    keep('gap', renderChartPng(spec([wave(0, gap), wave(1)]), fonts));
  });

  it('draws the 8 busiest of hundreds of series and says how many were left out', () => {
    const many: ChartSeries[] = Array.from({ length: 300 }, (_, i) => ({
      label: `GPU ${i}`,
      points: wave(0).points.map((p) => ({
        t: p.t,
        v: (i % 50) + (i % 7) * 0.01 + Math.sin(p.t / 600_000 + i),
      })),
    }));
    const chart = spec(many);
    const svg = renderChartSvg(chart);
    expect(svg).toContain('+292 more series not shown (the 8 with the highest mean are drawn)');
    expect(svg.match(/<tspan /g)).toHaveLength(8);
    // The six series near 49 (GPUs 49, 99, …, 299) and two of the six near 48.
    const drawn = [...svg.matchAll(/>GPU (\d+) <tspan/g)].map((m) => Number(m[1]));
    expect(drawn.filter((i) => i % 50 === 49)).toEqual([49, 99, 149, 199, 249, 299]);
    expect(drawn.filter((i) => i % 50 === 48)).toHaveLength(2);
    // Eight different colours even though the drawn series are far apart in the input.
    expect(
      new Set(svg.match(/stroke="#[0-9a-f]{6}"/g)?.filter((s) => !/e6e8eb|9198a1/.test(s))),
    ).toHaveProperty('size', 8);
    const text = renderSummaryText(chart);
    expect(text.split('\n').filter((l) => l.startsWith('GPU '))).toHaveLength(8);
    expect(text).toContain('+292 more series not shown');
    keep('hundreds', renderChartPng(chart, fonts));
  });

  it('skips NaN and infinities, says so, and keeps the axis finite', () => {
    const points = wave(0).points.map((p, i) => {
      if (i === 10) return { t: p.t, v: Number.NaN };
      if (i === 20) return { t: p.t, v: Number.POSITIVE_INFINITY };
      if (i === 30) return { t: p.t, v: Number.NEGATIVE_INFINITY };
      return p;
    });
    const { min: _min, max: _max, ...unbounded } = spec([{ label: 'GPU 0', points }]);
    const chart: ChartSpec = unbounded;
    const svg = renderChartSvg(chart);
    expect(svg).toContain('3 values skipped as not finite (1 NaN, 1 +Inf, 1 -Inf)');
    expect(svg).not.toMatch(/Infinity|NaN %/);
    expect(svg.match(/<path d=/g)!.length).toBe(4); // three holes make four stretches
    const png = renderChartPng(chart, fonts);
    keep('not-finite', png);
    expect(countColour(decodePng(png).pixels, SERIES_COLOURS[0])).toBeGreaterThan(300);
    expect(renderSummaryText(chart)).toContain('3 values skipped as not finite');
  });

  it('does not blow a one-degree wobble up to the full height when a minimum span is set', () => {
    const points = wave(0).points.map((p, i) => ({ t: p.t, v: 35 + (i % 2) }));
    const { min: _min, max: _max, ...base } = spec([{ label: 'GPU 0', points }]);
    const zoomed = renderChartSvg({ ...base, unit: '°C' });
    const calm = renderChartSvg({ ...base, unit: '°C', minSpan: 20 });
    const ticks = (svg: string) => [...svg.matchAll(/>(-?[\d.]+) °C</g)].map((m) => Number(m[1]));
    expect(Math.max(...ticks(zoomed)) - Math.min(...ticks(zoomed))).toBeLessThanOrEqual(2);
    expect(Math.max(...ticks(calm)) - Math.min(...ticks(calm))).toBeGreaterThanOrEqual(20);
  });

  it('escapes text so any instance name renders', () => {
    const chart = spec([wave(0)], { title: 'a<b & "c"' });
    expect(renderChartSvg(chart)).toContain('a&lt;b &amp; &quot;c&quot;');
    expect(pngHeader(renderChartPng(chart, fonts)).width).toBe(1000);
  });
});
