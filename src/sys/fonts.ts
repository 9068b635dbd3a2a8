import { accessSync, constants } from 'node:fs';
import { AppError, ErrorCode } from '../errors.js';

// Finds the font files the PNG charts are drawn with. render/ takes them as parameters and never
// scans the system itself, so a picture looks the same wherever the same files are given.

export interface FontChoice {
  readonly files: readonly string[];
  /** The family name inside the files, as SVG text asks for it. */
  readonly family: string;
}

/** Debian's fonts-dejavu-core first (the container installs it), then other common places. */
const CANDIDATES: ReadonlyArray<{ family: string; regular: string[]; bold: string[] }> = [
  {
    family: 'DejaVu Sans',
    regular: [
      '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf',
      '/usr/share/fonts/dejavu/DejaVuSans.ttf',
      '/usr/share/fonts/TTF/DejaVuSans.ttf',
      '/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf',
      '/Library/Fonts/DejaVuSans.ttf',
    ],
    bold: [
      '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf',
      '/usr/share/fonts/dejavu/DejaVuSans-Bold.ttf',
      '/usr/share/fonts/TTF/DejaVuSans-Bold.ttf',
      '/usr/share/fonts/dejavu-sans-fonts/DejaVuSans-Bold.ttf',
      '/Library/Fonts/DejaVuSans-Bold.ttf',
    ],
  },
  {
    family: 'Liberation Sans',
    regular: ['/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf'],
    bold: ['/usr/share/fonts/truetype/liberation/LiberationSans-Bold.ttf'],
  },
  {
    family: 'Noto Sans',
    regular: ['/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf'],
    bold: ['/usr/share/fonts/truetype/noto/NotoSans-Bold.ttf'],
  },
];

/**
 * The chart fonts on this machine. `extraFiles` (e.g. from a setting) are tried first, as family
 * `extraFamily`. Throws a sentence saying what to install when none is found.
 */
export function findChartFonts(
  options: { extraFiles?: readonly string[]; extraFamily?: string } = {},
): FontChoice {
  const extra = (options.extraFiles ?? []).filter(readable);
  if (extra.length > 0) return { files: extra, family: options.extraFamily ?? 'DejaVu Sans' };
  for (const candidate of CANDIDATES) {
    const regular = candidate.regular.find(readable);
    if (!regular) continue;
    const bold = candidate.bold.find(readable);
    return { files: bold ? [regular, bold] : [regular], family: candidate.family };
  }
  throw new AppError(
    ErrorCode.Unknown,
    'No font for the PNG charts: install DejaVu Sans (`apt-get install -y fonts-dejavu-core` on Debian or Ubuntu).',
  );
}

function readable(path: string): boolean {
  try {
    accessSync(path, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}
