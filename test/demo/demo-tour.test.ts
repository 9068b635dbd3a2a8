import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DemoProcess, spawnDemo } from './demo-process.js';

// A newcomer's wrong lines in the demo (shape C, where projects, filesystems and both cluster kinds
// can be listed): every answer says what is wrong and what to type next, and a script counts each
// refused line as failed, whatever kind of name it got wrong.

let work: string;
const running: DemoProcess[] = [];
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'gpuops-tour-'));
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((p) => p.kill()));
});
afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

const LINES = [
  '/gpu k8s create kube-1 v1.31',
  '/gpu k8s show kube-2',
  '/gpu slurm show slurm-2',
  '/gpu keys rm lapto',
  '/gpu waitlist rm w-nosuch',
  '/gpu project use nosuch',
  '/gpu k8s pool rm kube-1 nosuch-pool',
  '/as bob',
  '/press Approve',
  '/gpu create big-1 h100-hgx-80gb.8x',
  '/as ada',
  '/step stop_instance',
  '/step stop_instance bogus=1',
];

/** What the chat showed after `line` and before the next prompt. */
function shownAfter(out: string, line: string): string {
  const start = out.indexOf(`› ${line}\n`);
  expect(start, `no ${line} in\n${out}`).toBeGreaterThanOrEqual(0);
  const next = out.indexOf('› ', start + line.length + 3);
  return out.slice(start, next < 0 ? undefined : out.lastIndexOf('\n', next));
}

describe('gpuops demo: a newcomer types it wrong', () => {
  it('answers each wrong line with what to type next, and counts every one as failed', async () => {
    const file = join(work, 'wrong.txt');
    writeFileSync(file, `${LINES.join('\n')}\n`);
    const demo = spawnDemo(
      ['--script', file, '--shape', 'C', '--no-metrics', '--transition-ms', '200', '--timeout', '60'],
      { env: { TMPDIR: work } },
    );
    running.push(demo);
    const exit = await demo.exited;
    const out = demo.stdout();
    const err = demo.stderr();
    expect(exit.code, `${err}\n${out}`).toBe(1);

    // A cluster, key or waitlist entry that is not there fails the line like a machine that is not.
    for (const line of [
      '/gpu k8s show kube-2',
      '/gpu slurm show slurm-2',
      '/gpu keys rm lapto',
      '/gpu waitlist rm w-nosuch',
    ]) {
      expect(err).toMatch(new RegExp(`line \\d+: ${line.replace(/[/]/g, '\\/')}\\n`));
    }

    // A project is looked for in the organization, and the answer says how to list them.
    expect(shownAfter(out, '/gpu project use nosuch')).toContain(
      'No project "nosuch" in this organization. It has: default, research. Check the name with /gpu projects.',
    );
    // A node pool that is not there says how to list the cluster's pools.
    expect(out).toContain(
      'Cluster kube-1 has no node pool "nosuch-pool". It has no node pools. Check the name with /gpu k8s pools kube-1.',
    );
    // Counts agree with their nouns ("4 machines", never "machine(s)").
    expect(shownAfter(out, '/gpu create big-1 h100-hgx-80gb.8x')).toMatch(/Capacity: \d+ machines? of /);
    expect(out).not.toContain('(s)');

    // A step's missing input says how to give it in this chat; an input it does not have is named.
    expect(shownAfter(out, '/step stop_instance')).toContain(
      'In this chat, give it on the line: /step stop_instance instance=…',
    );
    expect(shownAfter(out, '/step stop_instance bogus=1')).toContain(
      'stop_instance has no input "bogus"; its inputs are channel_id, instance: /step stop_instance instance=….',
    );
  }, 180_000);
});
