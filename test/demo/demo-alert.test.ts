import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type DemoProcess, spawnDemo } from './demo-process.js';

// The default `gpuops demo` (no --budget) shows a budget alert: a small `research` budget covers a
// second project of the simulator whose machines already run, so its forecast passes the budget at
// the first check, and the alert (message and chart in #ml-research, DM to Bob) appears before the
// first prompt. The tour's creates are in the demo's own project: no budget holds them for Bob.

const work = mkdtempSync(join(tmpdir(), 'gpuops-demo-alert-'));
const running: DemoProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((p) => p.kill()));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** What the chat showed after `line` and before the next prompt. */
function shownAfter(out: string, line: string): string {
  const start = out.indexOf(`› ${line}\n`);
  expect(start, `no ${line} in\n${out}`).toBeGreaterThanOrEqual(0);
  const next = out.indexOf('› ', start + line.length + 3);
  return out.slice(start, next < 0 ? undefined : out.lastIndexOf('\n', next));
}

describe('gpuops demo: the default run shows a budget alert', () => {
  it('posts the research budget alert with its chart and a DM to Bob, and the tour creates do not wait for a budget owner', async () => {
    const file = join(work, 'tour.txt');
    writeFileSync(
      file,
      [
        '/gpu create train-1 h100-hgx-80gb.1x',
        '/gpu create big-1 h100-hgx-80gb.8x',
        '/as bob',
        '/press Approve',
        '/as ada',
        '/gpu budget',
        '',
      ].join('\n'),
    );
    const demo = spawnDemo(['--script', file, '--no-metrics', '--transition-ms', '300', '--timeout', '60'], {
      env: { TMPDIR: work },
    });
    running.push(demo);
    const exit = await demo.exited;
    const out = demo.stdout();
    expect(exit, `stderr: ${demo.stderr()}\n${out}`).toEqual({ code: 0, signal: null });

    // The alert, before the chat's first prompt: in the budget's channel, its chart in the thread, and
    // in Bob's DMs.
    const beforeChat = out.slice(0, out.indexOf('ada in #gpu-ops›'));
    expect(beforeChat).toMatch(/#\d+ gpuops in #ml-research/);
    expect(beforeChat).toMatch(
      /Budget research is forecast to end the month at \$[\d,.]+, over its \$[\d,.]+/,
    );
    expect(beforeChat).toMatch(/📎 .*research.* saved to /);
    expect(beforeChat).toMatch(/#\d+ gpuops in a DM with @bob[\s\S]*Budget research/);

    // The tour's creates: the small one runs at once, the large one waits for Bob only because of its
    // price an hour, never because of a budget.
    const small = shownAfter(out, '/gpu create train-1 h100-hgx-80gb.1x');
    expect(small).toContain('train-1 is running at');
    expect(small).not.toMatch(/approv|budget/i);
    const big = shownAfter(out, '/gpu create big-1 h100-hgx-80gb.8x');
    expect(big).toContain('above the $10.00/h that needs no approval');
    expect(big).not.toMatch(/budget/i);
    expect(shownAfter(out, '/press Approve')).toContain('big-1 is running at');

    // /gpu budget lists both budgets: the team's on track, the research one over its forecast.
    const budgets = shownAfter(out, '/gpu budget');
    expect(budgets).toMatch(/demo-team[\s\S]*on track/);
    expect(budgets).toMatch(/research[\s\S]*forecast over budget/);
  }, 180_000);
});
