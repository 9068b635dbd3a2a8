import type { Logger } from '../log/logger.js';
import type { ChartFonts } from '../render/render-chart-png.js';
import { findChartFonts } from '../sys/fonts.js';

/** The fonts the Home tab's spend chart is drawn with; without any, the Home tab shows figures only. */
export function homeChartFonts(log: Logger): ChartFonts | undefined {
  try {
    const fonts = findChartFonts();
    return { fontFiles: fonts.files, fontFamily: fonts.family };
  } catch (err) {
    log.warn({ err }, 'no fonts for the Home tab chart: it shows the figures without the picture');
    return undefined;
  }
}
