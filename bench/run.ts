import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { formatTargets, type Target } from './support/targets.js';

// `npm run bench`: runs every bench/*.bench.ts that exports run(), prints one table per benchmark and
// writes all results to bench/results/latest.json (gitignored). Benchmarks are not tests: they record.

export type { Target };

export interface BenchResult {
  readonly name: string;
  readonly description?: string;
  readonly iterations?: number;
  /** One table row per case; columns are the keys. */
  readonly rows: ReadonlyArray<Record<string, string | number>>;
  /** The headline numbers, e.g. median and ratio to a baseline. */
  readonly summary?: Record<string, string | number>;
  /** The numbered targets of docs/performance.md this benchmark measures (bench/support/targets.ts). */
  readonly targets?: readonly Target[];
  /** When it ran (set by this runner). */
  readonly at?: string;
}

const here = dirname(fileURLToPath(import.meta.url));

function table(rows: ReadonlyArray<Record<string, string | number>>): string {
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const cells = [columns, ...rows.map((r) => columns.map((c) => String(r[c] ?? '')))];
  const widths = columns.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  const line = (row: string[]) => row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ');
  return [line(cells[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join(
    '\n',
  );
}

async function previousResults(file: string): Promise<BenchResult[]> {
  try {
    return (JSON.parse(await readFile(file, 'utf8')) as { results?: BenchResult[] }).results ?? [];
  } catch {
    return [];
  }
}

async function main(): Promise<number> {
  const only = process.argv.slice(2);
  const files = (await readdir(here)).filter((f) => f.endsWith('.bench.ts')).sort();
  const results: BenchResult[] = [];
  let failed = 0;
  for (const file of files) {
    if (only.length > 0 && !only.some((name) => file.startsWith(name))) continue;
    const mod = (await import(pathToFileURL(join(here, file)).href)) as { run?: () => Promise<BenchResult> };
    if (typeof mod.run !== 'function') continue;
    process.stdout.write(`\n== ${file}\n`);
    try {
      const result = { ...(await mod.run()), at: new Date().toISOString() };
      results.push(result);
      if (result.description)
        process.stdout.write(
          `${result.description}${result.iterations ? `, ${result.iterations} runs` : ''}\n`,
        );
      // Other benchmarks may report without rows: print what they gave.
      process.stdout.write(
        `${Array.isArray(result.rows) ? table(result.rows) : JSON.stringify(result, null, 2)}\n`,
      );
      if (result.summary) {
        process.stdout.write(
          `${Object.entries(result.summary)
            .map(([k, v]) => `${k}=${v}`)
            .join('  ')}\n`,
        );
      }
    } catch (err) {
      failed++;
      process.stdout.write(`failed: ${(err as Error).stack ?? String(err)}\n`);
    }
  }
  const out = join(here, 'results', 'latest.json');
  // A run of some benchmarks keeps the others' last results, so latest.json always holds every target.
  const kept =
    only.length > 0
      ? (await previousResults(out)).filter((p) => !results.some((r) => r.name === p.name))
      : [];
  const all = [...kept, ...results];
  const targets = all
    .flatMap((r) => r.targets ?? [])
    .sort((a, b) => a.name.localeCompare(b.name, 'en', { numeric: true }));
  if (targets.length > 0) process.stdout.write(`\n== targets\n${formatTargets(targets)}\n`);
  await mkdir(dirname(out), { recursive: true });
  await writeFile(
    out,
    `${JSON.stringify({ at: new Date().toISOString(), node: process.version, targets, results: all }, null, 2)}\n`,
  );
  process.stdout.write(`\nWrote ${out}\n`);
  return failed > 0 ? 1 : 0;
}

process.exitCode = await main();
