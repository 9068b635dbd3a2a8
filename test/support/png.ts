import { Resvg } from '@resvg/resvg-js';

// Reading back a PNG the app wrote: the header by hand, the pixels by letting resvg draw the PNG as an
// <image> at its own size (resvg decodes PNG), so tests see what a person would.

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export function pngHeader(png: Buffer): { width: number; height: number } {
  if (!png.subarray(0, 8).equals(PNG_SIGNATURE)) throw new Error('not a PNG: bad signature');
  if (png.toString('latin1', 12, 16) !== 'IHDR') throw new Error('not a PNG: no IHDR chunk first');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

export function decodePng(png: Buffer): { width: number; height: number; pixels: Buffer } {
  const { width, height } = pngHeader(png);
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="${width}" height="${height}"><image width="${width}" height="${height}" xlink:href="data:image/png;base64,${png.toString('base64')}"/></svg>`;
  const image = new Resvg(svg, { font: { loadSystemFonts: false }, logLevel: 'off' }).render();
  return { width: image.width, height: image.height, pixels: image.pixels };
}

/** Pixels within `tolerance` of an #rrggbb colour. */
export function countColour(pixels: Buffer, hex: string, tolerance = 24): number {
  const r = Number.parseInt(hex.slice(1, 3), 16);
  const g = Number.parseInt(hex.slice(3, 5), 16);
  const b = Number.parseInt(hex.slice(5, 7), 16);
  let n = 0;
  for (let i = 0; i < pixels.length; i += 4) {
    if (
      Math.abs(pixels[i]! - r) <= tolerance &&
      Math.abs(pixels[i + 1]! - g) <= tolerance &&
      Math.abs(pixels[i + 2]! - b) <= tolerance &&
      pixels[i + 3]! > 200
    ) {
      n++;
    }
  }
  return n;
}

/** Pixels that are not (nearly) white. */
export function countInk(pixels: Buffer): number {
  let n = 0;
  for (let i = 0; i < pixels.length; i += 4) {
    if (pixels[i]! < 235 || pixels[i + 1]! < 235 || pixels[i + 2]! < 235) n++;
  }
  return n;
}
