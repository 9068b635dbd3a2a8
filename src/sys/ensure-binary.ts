import { spawn } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { AppError, ErrorCode } from '../errors.js';

// Finds the real servers the simulator, the tests and the demo run (prometheus, redis-server), and on a
// Debian machine where we are root may install the Debian package instead of failing.

/** Debian keeps some daemons outside a normal user's PATH. */
const EXTRA_DIRS = ['/usr/sbin', '/usr/bin', '/usr/local/bin', '/usr/local/sbin'];

/** Absolute path of an executable named `name` on PATH (plus /usr/sbin, /usr/bin), or undefined. */
export function findBinary(name: string, pathEnv: string | undefined = process.env.PATH): string | undefined {
  if (name.includes('/')) return isExecutable(name) ? name : undefined;
  const dirs = [...(pathEnv ?? '').split(delimiter).filter((d) => d !== ''), ...EXTRA_DIRS];
  for (const dir of new Set(dirs)) {
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export interface EnsureBinaryOptions {
  /** The Debian/Ubuntu package that ships the binary, e.g. prometheus or redis-server. */
  readonly debianPackage: string;
  /** Run apt-get when the binary is missing (only as root on Debian or Ubuntu). */
  readonly install: boolean;
  readonly log?: (line: string) => void;
  /** What to say for other systems, e.g. "install Prometheus 2.x and put it on PATH". */
  readonly otherwise?: string;
  /** For tests: PATH to search and the os-release file to read. */
  readonly pathEnv?: string;
  readonly osReleaseFile?: string;
}

/** Returns the binary's absolute path, installing the Debian package when allowed; otherwise says what to install. */
export async function ensureBinary(name: string, options: EnsureBinaryOptions): Promise<string> {
  const found = findBinary(name, options.pathEnv);
  if (found) return found;
  const otherwise = options.otherwise ?? `install ${options.debianPackage} and put ${name} on PATH`;
  const advice = `run \`apt-get install -y ${options.debianPackage}\` as root on Debian or Ubuntu, or ${otherwise}`;
  const debian = isDebianLike(options.osReleaseFile);
  const root = process.getuid?.() === 0;
  if (!options.install || !debian || !root) {
    throw new AppError(ErrorCode.Unknown, `${name} is not installed: ${advice}.`);
  }
  const log = options.log ?? (() => {});
  log(`${name} not found: installing the Debian package ${options.debianPackage} (apt-get install -y)`);
  let result = await aptGet(['install', '-y', '--no-install-recommends', options.debianPackage], log);
  if (
    result.code !== 0 &&
    /unable to locate package|has no installation candidate|404/i.test(result.output)
  ) {
    // A fresh container has no package lists yet.
    log('apt-get had no package list for it: running apt-get update first');
    const update = await aptGet(['update'], log);
    if (update.code === 0) {
      result = await aptGet(['install', '-y', '--no-install-recommends', options.debianPackage], log);
    }
  }
  const installed = findBinary(name, options.pathEnv);
  if (result.code !== 0 || !installed) {
    const tail = result.output.trim().split('\n').slice(-3).join(' / ');
    throw new AppError(
      ErrorCode.Unknown,
      `${name} is not installed and apt-get install -y ${options.debianPackage} failed (${tail || `exit ${result.code}`}): ${advice}.`,
    );
  }
  log(`${name} installed at ${installed}`);
  return installed;
}

/** True on Debian, Ubuntu and their derivatives, from /etc/os-release. */
export function isDebianLike(osReleaseFile = '/etc/os-release'): boolean {
  let text: string;
  try {
    text = readFileSync(osReleaseFile, 'utf8');
  } catch {
    return false;
  }
  const field = (key: string) =>
    new RegExp(`^${key}=("?)([^"\\n]*)\\1$`, 'm').exec(text)?.[2]?.toLowerCase().split(/\s+/) ?? [];
  return [...field('ID'), ...field('ID_LIKE')].some((id) => id === 'debian' || id === 'ubuntu');
}

/** Runs apt-get non-interactively, logging its lines; resolves with its exit code and output. */
export function aptGet(
  args: string[],
  log: (line: string) => void,
): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('apt-get', args, {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const collect = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      output += text;
      for (const line of text.split('\n')) if (line.trim() !== '') log(`apt-get: ${line.trim()}`);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', (err) => resolve({ code: 127, output: `${output}\n${err.message}` }));
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}
