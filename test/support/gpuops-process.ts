import { type ChildProcess, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { fileURLToPath } from 'node:url';

// Runs gpuops (or a test entry script) as a real child process: its JSON log lines are collected
// from stdout, and tests wait for a line, for the exit, or send it signals. Always kill() in afterAll.

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface ExitStatus {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface GpuopsProcess {
  readonly child: ChildProcess;
  /** Every stdout line so far (JSON log lines, parsed where they parse). */
  readonly lines: string[];
  readonly stderr: () => string;
  /** Resolves with the first log record (past or future) matching the predicate. */
  waitForLog(
    predicate: (record: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  readonly exited: Promise<ExitStatus>;
  /** SIGKILL if still running, and wait for the exit. */
  kill(): Promise<void>;
}

/** The environment a child gets: only what it needs, never the test runner's REDIS_URL and the like. */
export function childEnv(env: Readonly<Record<string, string>>): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
    ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
    ...env,
  };
}

function track(child: ChildProcess): GpuopsProcess {
  const lines: string[] = [];
  const records: Record<string, unknown>[] = [];
  const events = new EventEmitter();
  let stderr = '';
  let pending = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    for (const line of parts) {
      if (line.trim() === '') continue;
      lines.push(line);
      try {
        const record = JSON.parse(line) as Record<string, unknown>;
        records.push(record);
        events.emit('record', record);
      } catch {}
    }
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<ExitStatus>((resolve) => {
    child.once('exit', (code, signal) => {
      events.emit('exit');
      resolve({ code, signal });
    });
  });
  return {
    child,
    lines,
    stderr: () => stderr,
    waitForLog(predicate, timeoutMs = 20_000) {
      const found = records.find(predicate);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const cleanup = () => {
          clearTimeout(timer);
          events.off('record', onRecord);
          events.off('exit', onExit);
        };
        const onRecord = (record: Record<string, unknown>) => {
          if (!predicate(record)) return;
          cleanup();
          resolve(record);
        };
        const onExit = () => {
          cleanup();
          reject(
            new Error(`the process exited first; stderr: ${stderr}\nstdout:\n${lines.slice(-20).join('\n')}`),
          );
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(
            new Error(
              `no matching log line within ${timeoutMs} ms; stderr: ${stderr}\nstdout:\n${lines.slice(-20).join('\n')}`,
            ),
          );
        }, timeoutMs);
        events.on('record', onRecord);
        events.once('exit', onExit);
      });
    },
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** `node bin/gpuops.js <args>` in the project root. */
export function spawnGpuops(args: readonly string[], env: Readonly<Record<string, string>>): GpuopsProcess {
  return track(
    spawn(process.execPath, ['bin/gpuops.js', ...args], {
      cwd: root,
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
}

/** A TypeScript entry script of the tests, run through tsx. */
export function spawnScript(
  script: string,
  env: Readonly<Record<string, string>>,
  args: readonly string[] = [],
): GpuopsProcess {
  return track(
    spawn(process.execPath, ['--import', 'tsx', script, ...args], {
      cwd: root,
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
}

/** The same Redis with another database index, so a process with the fixed production queue name is alone. */
export function redisDb(url: string, db: number): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

/** Resolves once `read` returns something truthy, checking every 25 ms, or fails after `timeoutMs`. */
export async function until<T>(
  read: () => T | Promise<T>,
  what: string,
  timeoutMs = 10_000,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Compiled JavaScript run by node alone, as the image runs `dist/` (the benchmarks' production build). */
export function spawnNode(
  script: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
): GpuopsProcess {
  return track(
    spawn(process.execPath, [script, ...args], {
      cwd: root,
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
}
