// Small helpers shared by the benchmarks: percentiles, rounding, and the machine they ran on.

import { cpus, totalmem } from 'node:os';

/** The p-th percentile (0..100) by nearest rank; NaN for no values. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function round(n: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

export interface LatencySummary {
  readonly p50_ms: number;
  readonly p99_ms: number;
  readonly max_ms: number;
}

export function latencySummary(values: readonly number[]): LatencySummary {
  return {
    p50_ms: round(percentile(values, 50)),
    p99_ms: round(percentile(values, 99)),
    max_ms: round(percentile(values, 100)),
  };
}

/** What the numbers were measured on. */
export function machine(): Record<string, string | number> {
  return {
    cpus: cpus().length,
    cpu_model: cpus()[0]?.model ?? 'unknown',
    memory_gib: round(totalmem() / 2 ** 30, 1),
    node: process.version,
  };
}

/** Resident set size of a process in MiB, read from /proc (Linux). */
export async function rssMiB(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1] ?? Number.NaN);
  return round(kb / 1024, 1);
}

/** CPU time (user + system) a process has used so far, in ms, read from /proc (Linux; 100 ticks/s). */
export async function cpuMs(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses and may contain spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** User and system CPU time of a process so far, in ms. */
export async function cpuSplitMs(pid: number): Promise<{ user: number; system: number }> {
  const { readFile } = await import('node:fs/promises');
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 };
}

/** The median of some rounds' figures and their spread, e.g. "231.4 (218.0–240.2)". */
export function spread(values: readonly number[]): {
  median: number;
  min: number;
  max: number;
  text: string;
} {
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
  const min = sorted[0] ?? Number.NaN;
  const max = sorted.at(-1) ?? Number.NaN;
  return { median, min, max, text: `${round(median, 1)} (${round(min, 1)}–${round(max, 1)})` };
}
