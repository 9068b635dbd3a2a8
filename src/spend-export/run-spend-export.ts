import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { Redis } from 'ioredis';
import { connectOnce } from '../app/redis-connections.js';
import type { SpendRow } from '../budgets/spend-model.js';
import { createSpendSource } from '../budgets/spend-source.js';
import { SPEND_EXPORT_COMMAND } from '../cli-options/commands.js';
import { CliUsageError, optionValue, parseCli, readCommandArgs } from '../cli-options/options.js';
import { toolFailed } from '../cli-options/tool-failure.js';
import { parseConfig } from '../config.js';
import { loadPolicy } from '../policy/load-policy.js';
import { CLUSTER_STORE_PREFIX, createStore } from '../store/store.js';

// `gpuops spend export --month YYYY-MM [-o FILE]`: a month's rows of the spend ledger as CSV, one per
// machine and day, in date, project and instance order. Reads REDIS_URL and GPUOPS_POLICY, like
// `gpuops audit export` (src/audit/run-audit-export.ts).

export const SPEND_CSV_HEADER = 'date,project,instance,owner,type,hours,usd';

export interface SpendExportIo {
  readonly stdout: Writable;
  readonly stderr: { write(text: string): unknown };
}

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

function parse(args: readonly string[]): { month: string; out?: string } | 'help' {
  const parsed = parseCli(SPEND_EXPORT_COMMAND, args);
  if (parsed.help) return 'help';
  const month = optionValue(parsed, '--month');
  if (month === undefined)
    throw new CliUsageError('say which month: --month YYYY-MM, such as --month 2026-11.');
  if (!MONTH.test(month)) {
    throw new CliUsageError(
      `--month is a month written YYYY-MM, such as 2026-11; got "${month.slice(0, 40)}".`,
    );
  }
  const out = optionValue(parsed, '--out');
  return out !== undefined ? { month, out } : { month };
}

/** The last day of a `YYYY-MM` month, `YYYY-MM-DD`. */
export function lastDayOf(month: string): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return `${month}-${String(new Date(Date.UTC(y, m, 0)).getUTCDate()).padStart(2, '0')}`;
}

/** A CSV cell: quoted when it holds a comma, quote or line break; a leading = + - @ made inert. */
function cell(value: string): string {
  const safe = /^[=+\-@]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function spendCsvLine(r: SpendRow): string {
  return [
    r.day,
    cell(r.project),
    cell(r.instance),
    cell(r.owner ?? ''),
    cell(r.type),
    r.hours.toFixed(6),
    r.usd.toFixed(6),
  ].join(',');
}

export async function runSpendExport(
  args: readonly string[],
  env: Record<string, string | undefined>,
  io: SpendExportIo = { stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  const read = readCommandArgs(SPEND_EXPORT_COMMAND, () => parse(args), io);
  if ('exit' in read) return read.exit;
  const { month, out } = read.options;
  let redis: Redis | undefined;
  try {
    const config = parseConfig(env, 'none');
    const policy = await loadPolicy(config.GPUOPS_POLICY);
    const connected = await connectOnce(config);
    redis = connected.redis;
    const store = createStore(redis, connected.clustered ? CLUSTER_STORE_PREFIX : undefined);
    const rows = [
      ...(await createSpendSource({ store, policy }).rows({ from: `${month}-01`, to: lastDayOf(month) })),
    ];
    rows.sort(
      (a, b) =>
        a.day.localeCompare(b.day) ||
        a.project.localeCompare(b.project) ||
        a.instance.localeCompare(b.instance),
    );
    const text = `${[SPEND_CSV_HEADER, ...rows.map(spendCsvLine)].join('\n')}\n`;
    if (out) {
      const path = resolve(out);
      await mkdir(dirname(path), { recursive: true });
      const file = createWriteStream(path);
      file.end(text);
      await finished(file);
      io.stderr.write(`Wrote ${rows.length} rows of ${month} to ${out}.\n`);
    } else {
      io.stdout.write(text);
    }
    return 0;
  } catch (err) {
    return toolFailed('spend', err, io.stderr);
  } finally {
    redis?.disconnect();
  }
}
