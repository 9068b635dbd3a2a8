import type { ChartSeries, ChartSpec } from '../src/render/chart-spec.js';
import { DEFAULT_HEIGHT, DEFAULT_WIDTH } from '../src/render/chart-spec.js';
import { renderChartPng, svgToPng } from '../src/render/render-chart-png.js';
import { CHART_FONT_FAMILY, renderChartSvg } from '../src/render/render-chart-svg.js';
import { gpuReading, gpuStream } from '../src/sim/metrics/gpu-pattern.js';
import { findChartFonts } from '../src/sys/fonts.js';
import type { BenchResult } from './run.js';
import { atMost } from './support/targets.js';

// Scenario 3: a one-hour, 15-second-step, 8-GPU snapshot (the /gpu metrics default) rendered to PNG,
// against resvg rendering the very SVG gpuops renders (built once, outside the timing), so the ratio
// measures gpuops' own work; an empty chart of the same size is kept as a second reference. Same fonts,
// same run. Target (issue 16): ≤ 1.3× resvg of the same SVG.

export function snapshotSpec(): ChartSpec {
  const end = Date.UTC(2024, 4, 1, 11, 0, 0);
  const start = end - 3_600_000;
  const step = 15_000;
  const series: ChartSeries[] = Array.from({ length: 8 }, (_, gpu) => {
    const points = [];
    const stream = gpuStream(1, 'bench-instance', gpu);
    for (let t = start; t <= end; t += step) {
      points.push({
        t,
        v: gpuReading(stream, t, gpu === 5 ? 'idle' : 'busy', { gpuMemoryGiB: 80, maxPowerWatts: 700 }).util,
      });
    }
    return { label: `GPU ${gpu}`, points };
  });
  return {
    title: 'bench-instance · GPU utilisation',
    unit: '%',
    start,
    end,
    stepMs: step,
    series,
    min: 0,
    max: 100,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function time(fn: () => unknown): number {
  const started = performance.now();
  fn();
  return performance.now() - started;
}

export async function run(options: { iterations?: number } = {}): Promise<BenchResult> {
  const iterations = options.iterations ?? Number(process.env.BENCH_ITERATIONS ?? 30);
  const found = findChartFonts();
  const fonts = { fontFiles: found.files, fontFamily: found.family };
  const spec = snapshotSpec();
  const svg = renderChartSvg(spec, found.family ?? CHART_FONT_FAMILY);
  const empty = `<svg xmlns="http://www.w3.org/2000/svg" width="${DEFAULT_WIDTH}" height="${DEFAULT_HEIGHT}"><rect width="${DEFAULT_WIDTH}" height="${DEFAULT_HEIGHT}" fill="#ffffff"/></svg>`;
  // Warm-up: font loading and JIT, not measured.
  for (let i = 0; i < 3; i++) {
    renderChartPng(spec, fonts);
    svgToPng(empty, fonts);
    svgToPng(svg, fonts);
  }
  const chart: number[] = [];
  const same: number[] = [];
  const bare: number[] = [];
  let bytes = 0;
  for (let i = 0; i < iterations; i++) {
    // Interleaved so a slow moment of the machine hits both alike.
    chart.push(
      time(() => {
        bytes = renderChartPng(spec, fonts).length;
      }),
    );
    same.push(time(() => svgToPng(svg, fonts)));
    bare.push(time(() => svgToPng(empty, fonts)));
  }
  const chartMs = median(chart);
  const sameMs = median(same);
  const bareMs = median(bare);
  return {
    name: 'render',
    description: `PNG snapshot, 1 h at 15 s, 8 GPUs (${spec.series.length * spec.series[0]!.points.length} points), ${DEFAULT_WIDTH}×${DEFAULT_HEIGHT}`,
    iterations,
    rows: [
      { case: 'snapshot PNG (SVG build + resvg)', median_ms: round(chartMs), png_bytes: bytes },
      { case: 'resvg of the same SVG (baseline)', median_ms: round(sameMs) },
      { case: 'bare resvg, empty chart same size', median_ms: round(bareMs) },
    ],
    summary: {
      snapshot_median_ms: round(chartMs),
      same_svg_median_ms: round(sameMs),
      bare_median_ms: round(bareMs),
      ratio_vs_same_svg: round(chartMs / sameMs),
      ratio_vs_empty: round(chartMs / bareMs),
    },
    targets: [atMost('3 snapshot: PNG vs resvg of the same SVG (×)', round(chartMs / sameMs), 1.3)],
  };
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}
