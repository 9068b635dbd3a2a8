import { formatRange, formatValue, niceTicks, timeTicks, withUnit } from './chart-format.js';
import { type ChartSpec, DEFAULT_HEIGHT, DEFAULT_WIDTH } from './chart-spec.js';
import { prepareChart } from './prepare-chart.js';

// The metric chart as SVG: one line per series, legend, UTC time axis spanning the asked range, value
// axis with units, notes for what was left out. Pure string building; render-chart-png turns it into pixels.

/** Tableau 10: distinct for people with the common colour-vision deficiencies. */
export const SERIES_COLOURS = [
  '#4e79a7',
  '#f28e2b',
  '#e15759',
  '#76b7b2',
  '#59a14f',
  '#edc948',
  '#b07aa1',
  '#ff9da7',
  '#9c755f',
  '#bab0ac',
] as const;

export const CHART_FONT_FAMILY = 'DejaVu Sans';

const TEXT = '#1f2328';
const MUTED = '#59636e';
const GRID = '#e6e8eb';
const AXIS = '#9198a1';

export function renderChartSvg(spec: ChartSpec, fontFamily: string = CHART_FONT_FAMILY): string {
  const width = spec.width ?? DEFAULT_WIDTH;
  const height = spec.height ?? DEFAULT_HEIGHT;
  const chart = prepareChart(spec);
  const font = `${escapeXml(fontFamily)}, sans-serif`;
  const rangeText = formatRange(spec.start, spec.end);

  const legendColumns = width >= 800 ? 4 : 2;
  const legendRows = chart.hasData ? Math.ceil(chart.shown.length / legendColumns) : 0;
  const notesHeight = chart.notes.length * 18;
  const left = 78;
  const right = width - 28;
  const top = 84;
  const bottom = height - 40 - legendRows * 22 - notesHeight - (legendRows > 0 || notesHeight > 0 ? 10 : 0);
  const plotW = right - left;
  const plotH = Math.max(40, bottom - top);

  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="${font}">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${left}" y="34" font-size="21" font-weight="bold" fill="${TEXT}">${escapeXml(clip(spec.title, 70))}</text>`,
    `<text x="${left}" y="58" font-size="13" fill="${MUTED}">${escapeXml(rangeText)}${chart.stepMs ? ` · step ${Math.round(chart.stepMs / 1000)}s` : ''}</text>`,
  );

  const xOf = (t: number) => left + ((t - spec.start) / Math.max(1, spec.end - spec.start)) * plotW;
  const ticksT = timeTicks(spec.start, spec.end, Math.max(3, Math.floor(plotW / 140)));

  if (!chart.hasData) {
    out.push(
      `<rect x="${left}" y="${top}" width="${plotW}" height="${plotH}" fill="#f6f8fa" stroke="${GRID}"/>`,
      `<text x="${left + plotW / 2}" y="${top + plotH / 2}" font-size="20" text-anchor="middle" fill="${MUTED}">No data for ${escapeXml(rangeText)}</text>`,
      `<text x="${left + plotW / 2}" y="${top + plotH / 2 + 26}" font-size="13" text-anchor="middle" fill="${MUTED}">${spec.series.length === 0 ? 'No series matched.' : 'The series matched but hold no numbers in this range.'}</text>`,
    );
    axisTime(out, ticksT, xOf, left, bottom, MUTED);
    notes(out, chart.notes, left, bottom + 40, MUTED);
    out.push('</svg>');
    return out.join('\n');
  }

  const scale = niceTicks(chart.lo!, chart.hi!, Math.max(3, Math.floor(plotH / 60)));
  const yOf = (v: number) => bottom - ((v - scale.lo) / (scale.hi - scale.lo)) * plotH;

  // Grid and value axis.
  for (const v of scale.ticks) {
    const y = round(yOf(v));
    out.push(
      `<line x1="${left}" y1="${y}" x2="${right}" y2="${y}" stroke="${GRID}" stroke-width="1"/>`,
      `<text x="${left - 8}" y="${y + 4}" font-size="12" text-anchor="end" fill="${MUTED}">${escapeXml(withUnit(formatValue(v), spec.unit))}</text>`,
    );
  }
  for (const tick of ticksT) {
    const x = round(xOf(tick.t));
    out.push(`<line x1="${x}" y1="${top}" x2="${x}" y2="${bottom}" stroke="${GRID}" stroke-width="1"/>`);
  }
  axisTime(out, ticksT, xOf, left, bottom, MUTED);
  out.push(
    `<line x1="${left}" y1="${bottom}" x2="${right}" y2="${bottom}" stroke="${AXIS}" stroke-width="1"/>`,
  );
  out.push(`<line x1="${left}" y1="${top}" x2="${left}" y2="${bottom}" stroke="${AXIS}" stroke-width="1"/>`);

  // Lines, clipped to the plot so points outside the asked range do not spill over the axes.
  out.push(
    `<defs><clipPath id="plot"><rect x="${left}" y="${top - 2}" width="${plotW}" height="${plotH + 4}"/></clipPath></defs>`,
    '<g clip-path="url(#plot)" fill="none" stroke-width="2" stroke-linejoin="round" stroke-linecap="round">',
  );
  for (const [i, s] of chart.shown.entries()) {
    const colour = colourOf(i);
    for (const run of s.runs) {
      if (run.length === 1) {
        const p = run[0]!;
        out.push(
          `<circle cx="${round(xOf(p.t))}" cy="${round(yOf(p.v))}" r="3.5" fill="${colour}" stroke="none"/>`,
        );
        continue;
      }
      let d = '';
      for (let i = 0; i < run.length; i++) {
        const p = run[i]!;
        d += `${i === 0 ? 'M' : 'L'}${round(xOf(p.t))} ${round(yOf(p.v))}`;
      }
      out.push(`<path d="${d}" stroke="${colour}"/>`);
    }
  }
  out.push('</g>');

  // Legend: swatch, label, mean.
  const columnW = plotW / legendColumns;
  chart.shown.forEach((s, i) => {
    const x = left + (i % legendColumns) * columnW;
    const y = bottom + 44 + Math.floor(i / legendColumns) * 22;
    const colour = colourOf(i);
    const mean = s.stats.mean === null ? 'no data' : `mean ${withUnit(formatValue(s.stats.mean), spec.unit)}`;
    out.push(
      `<rect x="${round(x)}" y="${y - 9}" width="16" height="4" rx="1" fill="${colour}"/>`,
      `<text x="${round(x + 22)}" y="${y}" font-size="13" fill="${TEXT}">${escapeXml(clip(s.label, 18))} <tspan fill="${MUTED}">${escapeXml(mean)}</tspan></text>`,
    );
  });
  notes(out, chart.notes, left, bottom + 44 + legendRows * 22, MUTED);
  out.push('</svg>');
  return out.join('\n');
}

function axisTime(
  out: string[],
  ticks: ReadonlyArray<{ t: number; label: string }>,
  xOf: (t: number) => number,
  left: number,
  bottom: number,
  colour: string,
): void {
  for (const tick of ticks) {
    const x = round(xOf(tick.t));
    out.push(
      `<line x1="${x}" y1="${bottom}" x2="${x}" y2="${bottom + 5}" stroke="${AXIS}" stroke-width="1"/>`,
      `<text x="${x}" y="${bottom + 20}" font-size="12" text-anchor="middle" fill="${colour}">${escapeXml(tick.label)}</text>`,
    );
  }
  // The corner under the value axis is free: say there which clock the times are on.
  out.push(
    `<text x="${left - 26}" y="${bottom + 20}" font-size="12" text-anchor="end" fill="${colour}">UTC</text>`,
  );
}

function notes(out: string[], lines: readonly string[], x: number, y: number, colour: string): void {
  lines.forEach((line, i) => {
    out.push(
      `<text x="${x}" y="${y + i * 18}" font-size="13" font-style="italic" fill="${colour}">${escapeXml(line)}</text>`,
    );
  });
}

/** By position among the drawn series, so the top 8 of hundreds still get 8 different colours. */
function colourOf(position: number): string {
  return SERIES_COLOURS[position % SERIES_COLOURS.length]!;
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

export function escapeXml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}
