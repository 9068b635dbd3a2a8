import { access, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** A file name safe to save: no folders, no control characters. */
function safeName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? 'file';
  const cleaned = base.replace(/[^\w.+@-]+/g, '_').replace(/^\.+/, '');
  return cleaned === '' ? 'file' : cleaned.slice(0, 120);
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/** Saves `bytes` in `dir` under `filename` made safe, numbered when the name is taken; returns the path. */
export async function saveFileIn(dir: string, filename: string, bytes: Buffer): Promise<string> {
  await mkdir(dir, { recursive: true });
  const name = safeName(filename);
  const dot = name.lastIndexOf('.');
  const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  let path = join(dir, name);
  for (let n = 2; await exists(path); n++) path = join(dir, `${stem}-${n}${ext}`);
  await writeFile(path, bytes);
  return path;
}
