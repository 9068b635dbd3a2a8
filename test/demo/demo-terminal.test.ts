import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { descendantsOf, isAlive } from './demo-process.js';

// `gpuops demo` as a person at a terminal uses it: a real pseudo-terminal (util-linux `script`), keys
// typed one line at a time, answers printed above the prompt in colour, a form asked field by field
// that asks again after a mistake, and Ctrl-C stopping everything.

const root = fileURLToPath(new URL('../..', import.meta.url));
const temp = mkdtempSync(join(tmpdir(), 'gpuops-demo-tty-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

describe('gpuops demo at a terminal', () => {
  it('prompts, draws in colour, re-asks a form field, and stops everything on Ctrl-C', async () => {
    const command = `${process.execPath} bin/gpuops.js demo --no-metrics --transition-ms 300`;
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: temp, TMPDIR: temp, TERM: 'xterm' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const seen = (text: string, timeoutMs = 60_000) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!out.includes(text)) return;
          cleanup();
          resolve();
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`no "${text}" within ${timeoutMs} ms:\n${out.slice(-2000)}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          child.stdout.off('data', check);
        };
        child.stdout.on('data', check);
        check();
      });
    const type = (keys: string) => child.stdin.write(keys);

    try {
      await seen('ada in #gpu-ops› ');
      const started = descendantsOf(child.pid!);
      expect(started.map((p) => p.name)).toContain('redis-server');

      type('/gpu create train-1 h100-hgx-80gb.1x\r');
      await seen('train-1 is running at');
      // Bold message heads and emphasis on a terminal; the prompt comes back below the answers. (The
      // research budget's alert at start takes the first numbers, in #ml-research and Bob's DMs.)
      const esc = String.fromCharCode(27);
      expect(out).toMatch(new RegExp(`${esc}\\[1m#\\d+ gpuops in #gpu-ops${esc}\\[22m`));
      expect(out).toContain('\u001b[1mDone\u001b[22m');

      type('/gpu keys add\r');
      await seen('Key name (required)');
      type('\r');
      await seen('✗ Please fill this in.');
      type('ada-key\r');
      await seen('Public key (required)');
      type('not a key\r');
      await seen('Fix the fields above (or /cancel):');
      expect(out).toContain('That public key is not valid');
      type('/cancel\r');
      await seen('Form cancelled.');

      type('\u0003');
      expect(await exited).toBe(0);
      expect(out).toContain('Stopped listener and workers, local Slack API, simulator, Redis');
      expect(started.filter((p) => isAlive(p.pid))).toEqual([]);
      expect(readdirSync(temp).filter((n) => n.startsWith('gpuops-'))).toEqual([]);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 120_000);
});
