import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchResult, Target } from './run.js';

// `npm run bench:report`: bench/results/latest.json as the Markdown docs/performance.md shows (the
// targets, then each benchmark's table with when it ran), so the doc is refreshed from a run, not
// retyped.

const here = dirname(fileURLToPath(import.meta.url));

function cell(value: unknown): string {
  return String(value ?? '').replaceAll('|', '\\|');
}

export function markdownTable(rows: ReadonlyArray<Record<string, string | number>>): string {
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  return [
    `| ${columns.join(' | ')} |`,
    `|${columns.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${columns.map((c) => cell(r[c])).join(' | ')} |`),
  ].join('\n');
}

function minute(iso: string | undefined): string {
  return iso ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : 'unknown time';
}

export function targetsTable(targets: readonly Target[]): string {
  return markdownTable(
    targets.map((t) => ({
      target: t.name,
      value: t.value ?? 'none',
      bound: t.target,
      'met?': t.met ? 'yes' : '**no**',
    })),
  );
}

async function main(): Promise<void> {
  const file = process.argv[2] ?? join(here, 'results', 'latest.json');
  const latest = JSON.parse(await readFile(file, 'utf8')) as {
    at?: string;
    node?: string;
    targets?: Target[];
    results?: BenchResult[];
  };
  const out = [
    `Targets, written ${minute(latest.at)} (Node ${latest.node ?? '?'})`,
    '',
    targetsTable(latest.targets ?? []),
  ];
  for (const result of latest.results ?? []) {
    out.push('', `### ${result.name}`, '', `${result.description ?? ''} (ran ${minute(result.at)})`, '');
    out.push(markdownTable(result.rows));
    if (result.summary) {
      out.push(
        '',
        Object.entries(result.summary)
          .map(([k, v]) => `${k}=${v}`)
          .join('  '),
      );
    }
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

await main();
