import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBinary } from './ensure-binary.js';
import { freePort } from './free-port.js';

export interface PrivateRedis {
  readonly url: string;
  readonly port: number;
  readonly dir: string;
  /** Stops the server (SIGTERM, then SIGKILL) and removes its data folder. */
  close(): Promise<void>;
  /** Kills the server as a crash would, keeping its data folder (for restart tests). */
  kill(): Promise<void>;
  /**
   * Starts it again on the same port and folder, after kill(); one still running is left as it is.
   * Fails when another server took the port meanwhile, rather than passing that one off as this.
   */
  restart(): Promise<void>;
}

export interface PrivateRedisOptions {
  /** Install redis-server with apt-get when missing and running as root on Debian/Ubuntu. */
  readonly install?: boolean;
  /** Append-only file with fsync on every write (the durability the reliability suite relies on). */
  readonly appendOnly?: boolean;
  /** More redis-server arguments, e.g. `--replicaof 127.0.0.1 6379` for a replica. */
  readonly extraArgs?: readonly string[];
  readonly log?: (line: string) => void;
}

/** The process id of the redis-server answering on `port` (INFO server), or undefined if none answers. */
function serverPid(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    let answer = '';
    socket.setTimeout(500);
    socket.on('connect', () => socket.write('INFO server\r\n'));
    socket.on('data', (chunk) => {
      answer += chunk.toString();
      const pid = /\r\nprocess_id:(\d+)\r\n/.exec(answer);
      if (pid || answer.startsWith('-')) {
        socket.destroy();
        resolve(pid ? Number(pid[1]) : undefined);
      }
    });
    socket.on('timeout', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.on('error', () => resolve(undefined));
  });
}

// A port freed by kill() is free for anyone: another test's server may take it before restart().
// Only an answer from our own process counts, so such a restart fails instead of "succeeding".
async function waitForPing(port: number, child: ChildProcess, deadlineMs: number): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      const other = await serverPid(port);
      if (other !== undefined) {
        throw new Error(
          `port ${port} is held by another server (redis-server pid ${other}), so this one could not start on it`,
        );
      }
      throw new Error(`redis-server exited with code ${child.exitCode} at start`);
    }
    if ((await serverPid(port)) === child.pid) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis-server did not answer on port ${port} within ${deadlineMs} ms`);
}

function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill(signal);
  });
}

/**
 * A redis-server of our own on a free loopback port with its data in a temporary folder: what the
 * tests and the demo use when REDIS_URL is not set.
 */
export async function startPrivateRedis(options: PrivateRedisOptions = {}): Promise<PrivateRedis> {
  const log = options.log ?? (() => {});
  const binary = await ensureBinary('redis-server', {
    debianPackage: 'redis-server',
    install: options.install ?? false,
    log,
  });
  const dir = await mkdtemp(join(tmpdir(), 'gpuops-redis-'));
  const port = await freePort();
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--daemonize',
    'no',
    '--maxmemory-policy',
    'noeviction',
    ...(options.appendOnly ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']),
    ...(options.extraArgs ?? []),
  ];
  let child: ChildProcess | undefined;
  const launch = async () => {
    if (child && child.exitCode === null && child.signalCode === null) return;
    child = spawn(binary, args, { stdio: 'ignore' });
    await waitForPing(port, child, 10_000);
  };
  await launch();
  const cleanup = () => child?.kill('SIGKILL');
  process.once('exit', cleanup);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    async close() {
      process.removeListener('exit', cleanup);
      if (child) await stop(child, 'SIGTERM');
      await rm(dir, { recursive: true, force: true });
    },
    async kill() {
      if (child) await stop(child, 'SIGKILL');
    },
    restart: launch,
  };
}
