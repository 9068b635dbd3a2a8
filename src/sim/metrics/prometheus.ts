import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { AppError, ErrorCode } from '../../errors.js';

// Runs a real Prometheus for the simulator: its own temporary folder, a free loopback port, the
// /read route prefix the metrics API uses, and the exporter scraped every second.

export interface PrometheusOptions {
  /** Absolute path of the prometheus binary (from ensureBinary). */
  readonly binary: string;
  /** Full URL of the exporter Prometheus scrapes, e.g. http://127.0.0.1:4000/exporter/metrics. */
  readonly scrapeUrl: string;
  readonly log: (line: string) => void;
  readonly readyTimeoutMs?: number;
}

export interface RunningPrometheus {
  /** Base of the HTTP API, ending in /read (http://127.0.0.1:P/read). */
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  /** Stops Prometheus (SIGTERM, then SIGKILL) and removes its folder. */
  close(): Promise<void>;
}

/**
 * Runs the binary under a small sh watchdog that holds our stdin: when this process ends in any way —
 * even SIGKILL — the pipe closes, the watchdog stops Prometheus and removes its folder, so no orphan
 * keeps scraping on a shared machine.
 */
const WATCHDOG = [
  'exec 3<&0',
  '"$@" </dev/null &',
  'child=$!',
  '( cat <&3 >/dev/null 2>&1; kill -TERM "$child" 2>/dev/null ) >/dev/null 2>&1 &',
  'exec 3<&-',
  'wait "$child"',
  'status=$?',
  'rm -rf "$GPUOPS_PROMETHEUS_DIR"',
  'exit $status',
].join('\n');

export async function startPrometheus(options: PrometheusOptions): Promise<RunningPrometheus> {
  let lastError: unknown;
  // A free port can be taken between our probe and Prometheus binding it: try a few.
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await startOnce(options);
    } catch (err) {
      lastError = err;
      if (!(err instanceof PortTakenError)) break;
    }
  }
  throw lastError;
}

class PortTakenError extends Error {}

async function startOnce(options: PrometheusOptions): Promise<RunningPrometheus> {
  const dir = await mkdtemp(join(tmpdir(), 'gpuops-prometheus-'));
  const dataDir = join(dir, 'data');
  const configFile = join(dir, 'prometheus.yml');
  const target = new URL(options.scrapeUrl);
  await writeFile(configFile, prometheusConfig(target));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/read`;
  const args = [
    `--config.file=${configFile}`,
    `--storage.tsdb.path=${dataDir}`,
    '--storage.tsdb.retention.time=2d',
    `--web.listen-address=127.0.0.1:${port}`,
    '--web.route-prefix=/read',
    `--web.external-url=${url}`,
    '--log.level=info',
  ];
  const child = spawn('/bin/sh', ['-c', WATCHDOG, 'gpuops-prometheus', options.binary, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true, // own process group: a Ctrl-C meant for us does not kill it before we clean up
    env: { ...process.env, GPUOPS_PROMETHEUS_DIR: dir },
  });
  const logTail: string[] = [];
  const onOutput = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      logTail.push(line);
      if (logTail.length > 20) logTail.shift();
      if (/level=(error|fatal)/.test(line)) options.log(`prometheus: ${line}`);
    }
  };
  child.stdout?.on('data', onOutput);
  child.stderr?.on('data', onOutput);
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exitPromise = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      resolve();
    });
  });
  // Our process must not stay alive just for Prometheus: the watchdog handles our exit.
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr]) {
    (stream as unknown as { unref?: () => void } | null)?.unref?.();
  }
  const onProcessExit = () => child.stdin?.destroy();
  process.once('exit', onProcessExit);

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      process.removeListener('exit', onProcessExit);
      await stop(child, exitPromise, () => exited !== undefined);
      await rm(dir, { recursive: true, force: true });
    })();
    return closing;
  };

  try {
    await waitUntilReady(url, options.readyTimeoutMs ?? 30_000, () => exited);
  } catch (err) {
    await close();
    const tail = logTail.slice(-5).join('\n');
    if (/address already in use/.test(tail)) throw new PortTakenError(tail);
    throw new AppError(
      ErrorCode.Unknown,
      `Prometheus did not start: ${(err as Error).message}${tail ? `\nLast lines of its log:\n${tail}` : ''}`,
      { cause: err },
    );
  }
  options.log(`prometheus ready at ${url}, scraping ${options.scrapeUrl} every 1s (data in ${dataDir})`);
  return { url, port, dataDir, close };
}

function prometheusConfig(target: URL): string {
  const path = target.pathname === '' ? '/' : target.pathname;
  // JSON is valid YAML and needs no escaping rules of its own.
  return `${JSON.stringify(
    {
      global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1m' },
      scrape_configs: [
        {
          job_name: 'gpu-exporter',
          scheme: target.protocol.replace(':', ''),
          metrics_path: path,
          static_configs: [{ targets: [target.host] }],
        },
      ],
    },
    null,
    2,
  )}\n`;
}

async function waitUntilReady(
  url: string,
  timeoutMs: number,
  exited: () => { code: number | null; signal: NodeJS.Signals | null } | undefined,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const gone = exited();
    if (gone) throw new Error(`it exited (code ${gone.code ?? 'none'}, signal ${gone.signal ?? 'none'})`);
    try {
      const res = await request(`${url}/-/ready`, { headersTimeout: 2_000, bodyTimeout: 2_000 });
      await res.body.dump();
      if (res.statusCode === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`it was not ready within ${Math.round(timeoutMs / 1000)} s`);
}

async function stop(
  child: ChildProcess,
  exitPromise: Promise<void>,
  hasExited: () => boolean,
): Promise<void> {
  if (hasExited()) return;
  // Closing the watchdog's stdin makes it SIGTERM Prometheus, wait, and remove the folder.
  child.stdin?.end();
  const graceful = await Promise.race([
    exitPromise.then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5_000).unref()),
  ]);
  if (graceful) return;
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
  await Promise.race([exitPromise, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
