import { aptGet, isDebianLike } from '../sys/ensure-binary.js';
import { findChartFonts } from '../sys/fonts.js';

// The charts of /gpu metrics need a font file. On a fresh Debian or Ubuntu machine, as root, the demo
// installs DejaVu Sans itself (saying so) like it installs redis-server and Prometheus; otherwise it
// says what to install and runs without charts.

const FONT_PACKAGE = 'fonts-dejavu-core';

/** True when the charts have a font (found, or installed now); `say` tells the person what happened. */
export async function ensureChartFonts(say: (line: string) => void): Promise<boolean> {
  try {
    findChartFonts();
    return true;
  } catch (err) {
    const why = (err as Error).message;
    if (process.getuid?.() !== 0 || !isDebianLike()) {
      say(`Charts are off: ${why}`);
      return false;
    }
    say(`No font for the charts: installing the Debian package ${FONT_PACKAGE} (apt-get install -y)`);
    const install = () => aptGet(['install', '-y', '--no-install-recommends', FONT_PACKAGE], () => {});
    let result = await install();
    if (
      result.code !== 0 &&
      /unable to locate package|has no installation candidate|404/i.test(result.output)
    ) {
      // A fresh machine has no package lists yet.
      if ((await aptGet(['update'], () => {})).code === 0) result = await install();
    }
    try {
      findChartFonts();
      say(`${FONT_PACKAGE} installed`);
      return true;
    } catch {
      const tail = result.output.trim().split('\n').slice(-2).join(' / ');
      say(`Charts are off: apt-get install -y ${FONT_PACKAGE} failed (${tail || `exit ${result.code}`}).`);
      return false;
    }
  }
}
