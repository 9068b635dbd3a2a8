import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type DemoProcess, spawnDemo } from './demo-process.js';

// `home` in `gpuops demo`: the terminal chat opens the acting person's Home tab as Slack would (an
// app_home_opened event to the same listeners), prints the view the bot publishes with numbered
// buttons, and a press of one acts through the queue like the slash command.

const work = mkdtempSync(join(tmpdir(), 'gpuops-demo-home-'));
const running: DemoProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((p) => p.kill()));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('gpuops demo: the Home tab', () => {
  it('shows Ada her machine with buttons, and Stop from there stops it', async () => {
    const file = join(work, 'home.txt');
    writeFileSync(
      file,
      ['/gpu watch on', '/gpu create train-1 h100-hgx-80gb.1x', 'home', '/press Stop', ''].join('\n'),
    );
    const demo = spawnDemo(['--script', file, '--no-metrics', '--transition-ms', '300', '--timeout', '60'], {
      env: { TMPDIR: work },
    });
    running.push(demo);
    const exit = await demo.exited;
    const out = demo.stdout();
    expect(exit, `stderr: ${demo.stderr()}\n${out}`).toEqual({ code: 0, signal: null });

    const home = out.slice(out.indexOf('› home\n'));
    expect(home).toContain('Home tab of you (@ada)\n│ gpuops\n');
    expect(home).toContain('│ Your machines · 1 made through gpuops');
    expect(home).toMatch(/│ train-1 · .* · made in #gpu-ops/);
    expect(home).toMatch(/\[\d+\] Create a machine…/);
    expect(home).toMatch(/\[\d+\] Stop {2}\[\d+\] Metrics/);
    expect(home).toContain('│ This week (since ');

    const press = out.slice(out.indexOf('› /press Stop\n'));
    expect(press).toMatch(/@ada pressed \[\d+\] Stop/);
    expect(press).toMatch(
      /Home tab of you \(@ada\) \(updated\)\n│ gpuops\n│ ⏳ `\/gpu stop train-1` is queued as job \S+; its progress is in #gpu-ops\./,
    );
    expect(press).toContain('train-1 is stopped.');
  }, 120_000);
});
