import { type ChildProcess, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// `gpuops demo` as a person or a script runs it: a child process whose standard output is the chat's
// transcript. Tests wait for a line to appear, read the process tree it started (by PID, from /proc),
// and check after the exit that none of those processes is left.

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface DemoProcess {
  readonly child: ChildProcess;
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** Resolves once standard output contains `text` (already or later). */
  waitForOutput(text: string, timeoutMs?: number): Promise<void>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(): Promise<void>;
}

export interface DemoSpawnOptions {
  readonly env?: Readonly<Record<string, string>>;
  /** Keep standard input open as a pipe (to write lines, or to send a signal first); default /dev/null. */
  readonly pipeStdin?: boolean;
}

/** `node bin/gpuops.js demo <args>` in the project root, with only the environment given. */
export function spawnDemo(args: readonly string[], options: DemoSpawnOptions = {}): DemoProcess {
  const child = spawn(process.execPath, ['bin/gpuops.js', 'demo', ...args], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      ...options.env,
    },
    stdio: [options.pipeStdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const events = new EventEmitter();
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    events.emit('out');
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      events.emit('out');
      resolve({ code, signal });
    });
  });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    waitForOutput(text, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (out.includes(text)) {
            cleanup();
            resolve();
          } else if (child.exitCode !== null || child.signalCode !== null) {
            cleanup();
            reject(new Error(`the demo exited before printing "${text}"; stderr: ${err}\nstdout:\n${out}`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(
            new Error(`no "${text}" within ${timeoutMs} ms; stderr: ${err}\nstdout:\n${out.slice(-3000)}`),
          );
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          events.off('out', check);
        };
        events.on('out', check);
        check();
      });
    },
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Every process whose parent chain leads to `pid`, with its command name (Linux /proc). */
export function descendantsOf(pid: number): Array<{ pid: number; name: string }> {
  const parents = new Map<number, number>();
  const names = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid …; comm may hold spaces and parentheses, so read around the last ')'.
      const close = stat.lastIndexOf(')');
      const name = stat.slice(stat.indexOf('(') + 1, close);
      const ppid = Number(stat.slice(close + 2).split(' ')[1]);
      parents.set(Number(entry), ppid);
      names.set(Number(entry), name);
    } catch {
      // The process ended while we looked.
    }
  }
  const out: Array<{ pid: number; name: string }> = [];
  const visit = (parent: number) => {
    for (const [child, ppid] of parents) {
      if (ppid === parent) {
        out.push({ pid: child, name: names.get(child) ?? '?' });
        visit(child);
      }
    }
  };
  visit(pid);
  return out;
}

/** True while a process with this PID exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}
