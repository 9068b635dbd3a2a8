import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type DemoProcess, spawnDemo } from './demo-process.js';

// `gpuops demo --budget 1`: the demo's budget is small enough that the running demo-1 takes its
// forecast past it, so the budget alert appears in #gpu-ops, and /gpu spend and /gpu budget show it.

const work = mkdtempSync(join(tmpdir(), 'gpuops-demo-budget-'));
const running: DemoProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((p) => p.kill()));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('gpuops demo: a budget alert', () => {
  it('posts the forecast alert in #gpu-ops, and /gpu spend and /gpu budget answer', async () => {
    const demo = spawnDemo(
      ['--script', '-', '--no-metrics', '--transition-ms', '300', '--timeout', '60', '--budget', '1'],
      { env: { TMPDIR: work }, pipeStdin: true },
    );
    running.push(demo);
    // The first command makes gpuops count the project's spend; its looks then see demo-1 running.
    demo.child.stdin!.write('/gpu ls\n');
    await demo.waitForOutput('Budget demo-team is forecast to end the month at', 90_000);
    demo.child.stdin!.write('/gpu spend\n/gpu budget\n');
    await demo.waitForOutput('forecast over budget', 60_000);
    demo.child.stdin!.end();
    const exit = await demo.exited;
    const out = demo.stdout();
    expect(exit, `stderr: ${demo.stderr()}\n${out}`).toEqual({ code: 0, signal: null });
    expect(out).toMatch(/Budget demo-team is forecast to end the month at \$[\d,.]+, over its \$1\.00/);
    const spend = out.slice(out.indexOf('› /gpu spend'));
    expect(spend).toMatch(/\$[\d,.]+ for all projects in \w+ \d{4}|No spend counted for all projects/);
    expect(out.slice(out.indexOf('› /gpu budget'))).toContain('demo-team');
  }, 180_000);
});
