import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DemoProcess, spawnDemo } from './demo-process.js';

// A form answered on the line that opens it: Deny asks for a reason, and a script that goes on to
// the next line would drop the form. `/press Deny reason="too big"` fills it in and submits it.

let work: string;
const running: DemoProcess[] = [];
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'gpuops-inline-form-'));
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((p) => p.kill()));
});
afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

async function runScript(name: string, lines: readonly string[]) {
  const file = join(work, `${name}.txt`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  const demo = spawnDemo(['--script', file, '--no-metrics', '--transition-ms', '200', '--timeout', '60'], {
    env: { TMPDIR: work },
  });
  running.push(demo);
  const exit = await demo.exited;
  return { exit, out: demo.stdout(), err: demo.stderr() };
}

describe('gpuops demo: a form answered inline', () => {
  it('denies with the reason given on the /press line, and the requester reads it', async () => {
    const { exit, out, err } = await runScript('deny', [
      '/gpu create big-1 h100-hgx-80gb.8x',
      '/as bob',
      '/press Deny reason="too big for a test, use h100-hgx-80gb.1x"',
      '/as ada',
      '/gpu ls',
    ]);
    expect(exit, `stderr: ${err}\n${out}`).toEqual({ code: 0, signal: null });
    const deny = out.slice(out.indexOf('› /press Deny'), out.indexOf('› /as ada'));
    expect(deny).toContain('▣ Deny request');
    expect(deny).toContain('Reason: too big for a test, use h100-hgx-80gb.1x');
    expect(deny).toContain('Denied by @bob');
    expect(deny).toContain('too big for a test, use h100-hgx-80gb.1x');
    expect(out.slice(out.lastIndexOf('› /gpu ls'))).not.toContain('big-1');
  }, 120_000);

  it('names the fields when an inline answer matches none, and counts the line as failed', async () => {
    const { exit, out, err } = await runScript('deny-typo', [
      '/gpu create big-2 h100-hgx-80gb.8x',
      '/as bob',
      '/press Deny why="too big"',
    ]);
    expect(exit.code, out).toBe(1);
    expect(out).toContain('This form has no field why; its fields are reason, so it was closed.');
    expect(err).toContain('line 3: /press Deny why="too big"');
  }, 120_000);
});
