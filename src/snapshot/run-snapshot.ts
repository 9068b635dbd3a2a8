import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Dispatcher } from 'undici';
import { SNAPSHOT_COMMAND } from '../cli-options/commands.js';
import { CliUsageError, optionValue, parseCli, readCommandArgs } from '../cli-options/options.js';
import { ConfigError, parseConfig } from '../config.js';
import { AppError, asAppError } from '../errors.js';
import { isMetricName, METRIC_NAMES } from '../metrics/catalog.js';
import { metricsTokenProvider } from '../metrics/metrics-auth.js';
import { createMetricsClient } from '../metrics/metrics-client.js';
import { metricCatalogOf, metricsAuthOf } from '../metrics/metrics-from-config.js';
import { MAX_RANGE_SECONDS, MIN_RANGE_SECONDS, RANGE_BOUNDS } from '../metrics/range-rule.js';
import { findChartFonts } from '../sys/fonts.js';
import { takeSnapshot } from './take-snapshot.js';

// `gpuops snapshot <instance> --out <file.png> [--metric util|memory|power|temp] [--range 1h] [--end T]`:
// the PNG /gpu metrics would post, written to a file, with its text summary on stdout.

export interface SnapshotIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  readonly now?: () => number;
  readonly dispatcher?: Dispatcher;
}

/** Parses 90s, 15m, 1h, 1h30m, 2d, 1w into milliseconds; undefined when it is not a duration. */
export function parseRange(text: string): number | undefined {
  const units: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
  if (!/^(\d+[smhdw])+$/.test(text)) return undefined;
  let ms = 0;
  for (const [, n, unit] of text.matchAll(/(\d+)([smhdw])/g)) ms += Number(n) * units[unit!]!;
  return ms;
}

function parseEnd(text: string): number | undefined {
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

export async function runSnapshot(
  args: readonly string[],
  env: Record<string, string | undefined>,
  io: SnapshotIo = { stdout: process.stdout, stderr: process.stderr },
): Promise<number> {
  const read = readCommandArgs(SNAPSHOT_COMMAND, () => parse(args), io);
  if ('exit' in read) return read.exit;
  const parsed = read.options;
  try {
    const config = parseConfig(env, 'metrics');
    const catalog = metricCatalogOf(config);
    const client = createMetricsClient({
      baseUrl: config.METRICS_URL!,
      tokens: metricsTokenProvider({
        ...metricsAuthOf(config),
        ...(io.dispatcher ? { dispatcher: io.dispatcher } : {}),
      }),
      ...(io.dispatcher ? { dispatcher: io.dispatcher } : {}),
    });
    const fonts = findChartFonts();
    const snapshot = await takeSnapshot(
      { client, catalog, fonts: { fontFiles: fonts.files, fontFamily: fonts.family } },
      {
        instance: parsed.instance,
        metric: parsed.metric,
        rangeMs: parsed.rangeMs,
        end: parsed.end ?? (io.now ?? Date.now)(),
      },
    );
    const out = resolve(parsed.out);
    await mkdir(dirname(out), { recursive: true });
    await writeFile(out, snapshot.png);
    for (const warning of snapshot.warnings) io.stderr.write(`Prometheus warning: ${warning}\n`);
    io.stdout.write(`${snapshot.text}\n`);
    io.stdout.write(
      `Wrote ${parsed.out} (${snapshot.spec.width ?? 1000}×${snapshot.spec.height ?? 560} PNG, ${snapshot.png.length} bytes)\n`,
    );
    return 0;
  } catch (err) {
    if (err instanceof ConfigError) {
      io.stderr.write(
        `gpuops snapshot: ${err.message}\nSee .env.example and docs/metrics.md. To try it on the simulator, run gpuops sim --env in another terminal and paste its export lines here.\n`,
      );
      return 1;
    }
    const appError = err instanceof AppError ? err : asAppError(err);
    io.stderr.write(`gpuops snapshot: ${appError.message}\n`);
    return 1;
  }
}

/** Reads the arguments against SNAPSHOT_COMMAND's table (src/cli-options/commands.ts). */
function parse(args: readonly string[]) {
  const parsed = parseCli(SNAPSHOT_COMMAND, args);
  if (parsed.help) return 'help' as const;
  const [instance] = parsed.args;
  if (!instance) throw new CliUsageError('name the instance (its id or name).');
  const out = optionValue(parsed, '--out');
  if (!out) throw new CliUsageError('--out <file.png> is required.');
  const metric = optionValue(parsed, '--metric') ?? 'util';
  if (!isMetricName(metric))
    throw new CliUsageError(`--metric must be one of ${METRIC_NAMES.join(', ')}, not "${metric}".`);
  const range = optionValue(parsed, '--range') ?? '1h';
  const rangeMs = parseRange(range);
  if (rangeMs === undefined || rangeMs < MIN_RANGE_SECONDS * 1000 || rangeMs > MAX_RANGE_SECONDS * 1000) {
    throw new CliUsageError(
      `--range takes a duration ${RANGE_BOUNDS} (as /gpu metrics does), such as 15m, 1h or 1d, not "${range}".`,
    );
  }
  const endText = optionValue(parsed, '--end');
  let end: number | undefined;
  if (endText !== undefined) {
    end = parseEnd(endText);
    if (end === undefined)
      throw new CliUsageError(`--end takes an RFC 3339 time or unix seconds, not "${endText}".`);
  }
  return { instance, out, metric, rangeMs, end };
}
