import { Resvg } from '@resvg/resvg-js';
import type { ChartSpec } from './chart-spec.js';
import { CHART_FONT_FAMILY, renderChartSvg } from './render-chart-svg.js';

export interface ChartFonts {
  /** TTF/OTF files resvg loads; the caller finds them (src/sys/fonts.ts), render/ does no file lookup of its own. */
  readonly fontFiles: readonly string[];
  /** Family name inside those files; default DejaVu Sans. */
  readonly fontFamily?: string;
}

/** The chart as PNG bytes, exactly spec.width × spec.height. System fonts are never scanned. */
export function renderChartPng(spec: ChartSpec, fonts: ChartFonts): Buffer {
  const family = fonts.fontFamily ?? CHART_FONT_FAMILY;
  return svgToPng(renderChartSvg(spec, family), fonts);
}

/** Any SVG through the same resvg settings (the benchmark's baseline uses it). */
export function svgToPng(svg: string, fonts: ChartFonts): Buffer {
  const family = fonts.fontFamily ?? CHART_FONT_FAMILY;
  const resvg = new Resvg(svg, {
    font: {
      loadSystemFonts: false,
      fontFiles: [...fonts.fontFiles],
      defaultFontFamily: family,
      sansSerifFamily: family,
    },
    fitTo: { mode: 'original' },
    shapeRendering: 2,
    textRendering: 1,
    logLevel: 'off',
  });
  return resvg.render().asPng();
}
