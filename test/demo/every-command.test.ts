import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../src/cloud/routes.js';
import { SHAPES, type Shape } from '../../src/cloud/shape.js';
import { kindsMissingIn } from '../../src/commands/availability.js';
import { parseCommand } from '../../src/commands/parse-command.js';
import {
  ALWAYS_APPROVED_KINDS,
  GPU_COMMAND_KINDS,
  type GpuCommandKind,
} from '../../src/commands/registry.js';
import { ed25519PublicKey } from '../cloud/ssh-key-fixtures.js';
import { type DemoProcess, spawnDemo } from './demo-process.js';

// The newcomer's first hour, as a script: every subcommand the shape supports, once, with valid
// arguments, through `gpuops demo --script` in each of shapes A, B and C. It must exit 0 (no line
// failed), and no answer may name an internal operation or say "shape".

/** Lines in the order a person would run them; `approve` lines wait for Bob's button. */
interface Step {
  readonly line: string;
  /** Lines that fill the form the command opens, one per field. */
  readonly form?: readonly string[];
  /** Only in these shapes (a resource that exists only there). */
  readonly only?: readonly Shape[];
  /** Lines that follow it (another person's answer to it). */
  readonly answer?: readonly string[];
}

const KEY = ed25519PublicKey('ada@laptop');
const KUBECONFIG =
  'apiVersion: v1\\nkind: Config\\nclusters:\\n- name: ext\\n  cluster:\\n    server: https://10.0.0.1:6443\\nusers:\\n- name: ext\\n  user:\\n    token: demo\\ncontexts:\\n- name: ext\\n  context:\\n    cluster: ext\\n    user: ext\\ncurrent-context: ext';

const STEPS: readonly Step[] = [
  { line: '/gpu help' },
  { line: '/gpu help k8s' },
  { line: '/gpu configs' },
  { line: '/gpu capacity' },
  { line: '/gpu projects' },
  { line: '/gpu project' },
  { line: '/gpu project use default', only: ['C'] },
  { line: '/gpu ls' },
  { line: '/gpu show demo-1' },
  { line: '/gpu create t-1 rtx-a5000-24gb.1x' },
  { line: '/gpu stop t-1' },
  { line: '/gpu start t-1' },
  { line: '/gpu schedule stop t-1 weekdays 20:00' },
  { line: '/gpu schedule start demo-1 weekdays 07:30' },
  { line: '/gpu schedules' },
  { line: '/gpu metrics demo-1 --range 15m' },
  { line: '/gpu metrics query avg(DCGM_FI_DEV_GPU_UTIL) --range 15m' },
  { line: '/gpu spend' },
  { line: '/gpu budget' },
  { line: '/gpu rm t-1' },
  { line: '/gpu keys add', form: ['ada-laptop', KEY] },
  { line: '/gpu keys' },
  { line: '/gpu fs create data-1 512Gi' },
  { line: '/gpu fs' },
  { line: '/gpu fs show data-1', only: ['C'] },
  { line: '/gpu fs rm data-1' },
  { line: '/gpu k8s create kube-1 v1.31' },
  { line: '/gpu k8s ls' },
  { line: '/gpu k8s show kube-1' },
  { line: '/gpu k8s upgrade kube-1 v1.32' },
  { line: '/gpu k8s label kube-1 team=ml' },
  { line: '/gpu k8s pools kube-1' },
  { line: '/gpu k8s pool add kube-1 gpu-a rtx-a5000-24gb.1x 1' },
  { line: '/gpu k8s pool rm kube-1 gpu-a' },
  { line: '/gpu k8s kubeconfig kube-1' },
  { line: '/gpu k8s register', form: ['ext-1', KUBECONFIG, '', '', ''] },
  { line: '/gpu k8s rm kube-1' },
  { line: '/gpu slurm ls' },
  // Shapes A and C start with a seeded cluster; B gets one of its own below.
  { line: '/gpu slurm show slurm-1', only: ['A', 'C'] },
  { line: '/gpu slurm pools slurm-1', only: ['A', 'C'] },
  { line: '/gpu slurm users slurm-1' },
  { line: '/gpu slurm adduser slurm-1' },
  { line: '/gpu slurm rmuser slurm-1 ada_lovelace' },
  { line: '/gpu slurm create hpc-2' },
  { line: '/gpu slurm show hpc-2', only: ['B'] },
  { line: '/gpu slurm pools hpc-2', only: ['B'] },
  { line: '/gpu slurm pool add hpc-2 compute a100-sxm4-80gb.4x 1' },
  { line: '/gpu slurm pool rm hpc-2 compute' },
  { line: '/gpu slurm rm hpc-2' },
  { line: '/gpu keys rm ada-laptop' },
  { line: '/gpu watch on' },
  { line: '/gpu jobs' },
  { line: '/gpu approvals' },
  { line: '/gpu waitlist h100-hgx-80gb.8x 2' },
  { line: '/gpu waitlist' },
  // Bob denies a costly create with the reason on the same line as the button. With it the script
  // sends more requests a minute than the default per-person limit: the demo's policy allows more.
  {
    line: '/gpu create big-1 h100-hgx-80gb.8x',
    answer: ['/as bob', '/press Deny reason="too big for the tour, use a 1x"', '/as ada'],
  },
];

/**
 * Supported subcommands the script leaves out, and why: most need a value the cloud or the bot makes
 * up during the run (an id), which a script written beforehand cannot know. `slurm sudo` is for
 * admins and always waits for an approver other than the requester; the demo has one admin, who is
 * also its only approver (test/e2e/slurm.test.ts runs it end to end).
 */
const LEFT_OUT: Readonly<Record<Shape, readonly GpuCommandKind[]>> = {
  // Projects cannot be listed in A and B, so `project use` takes the project's id.
  A: ['project.use', 'waitlist.rm', 'schedule.rm', 'audit', 'slurm.sudo'],
  // Filesystems cannot be listed in B, so `fs show` takes the id `fs create` answered with.
  B: ['project.use', 'fs.show', 'waitlist.rm', 'schedule.rm', 'audit'],
  C: ['waitlist.rm', 'schedule.rm', 'audit'],
};

function kindOf(line: string): GpuCommandKind {
  const parsed = parseCommand(line.replace(/^\/gpu\s*/, ''));
  if (!parsed.ok) throw new Error(`${line}: ${parsed.error.message}`);
  return parsed.command.kind;
}

function scriptFor(shape: Shape): { lines: string[]; kinds: Set<GpuCommandKind> } {
  const missing = new Set(kindsMissingIn(shape));
  const lines: string[] = [];
  const kinds = new Set<GpuCommandKind>();
  for (const step of STEPS) {
    const kind = kindOf(step.line);
    if (missing.has(kind) || (step.only && !step.only.includes(shape))) continue;
    kinds.add(kind);
    lines.push(step.line, ...(step.form ?? []), ...(step.answer ?? []));
    if (ALWAYS_APPROVED_KINDS.includes(kind)) lines.push('/as bob', '/press Approve', '/as ada');
  }
  // The admin's commands, as Bob.
  lines.push('/as bob', '/gpu audit 5', '/as ada');
  kinds.add('audit');
  return { lines, kinds };
}

let work: string;
const running: DemoProcess[] = [];
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'gpuops-every-'));
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((p) => p.kill()));
});
afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

describe.each(SHAPES)('every subcommand shape %s supports, through the demo', (shape) => {
  it('covers every supported subcommand but the few that need an id made during the run', () => {
    const { kinds } = scriptFor(shape);
    const missing = new Set(kindsMissingIn(shape));
    const supported = GPU_COMMAND_KINDS.filter((k) => !missing.has(k));
    const skipped: readonly GpuCommandKind[] = LEFT_OUT[shape].filter((k) => k !== 'audit');
    expect(supported.filter((k) => !kinds.has(k) && !skipped.includes(k))).toEqual([]);
  });

  it('runs the script to the end with no failed line and no internal operation named', async () => {
    const { lines } = scriptFor(shape);
    const file = join(work, `every-${shape}.txt`);
    writeFileSync(file, `${lines.join('\n')}\n`);
    const demo = spawnDemo(
      ['--script', file, '--shape', shape, '--transition-ms', '200', '--timeout', '60'],
      {
        env: { TMPDIR: work },
      },
    );
    running.push(demo);
    const exit = await demo.exited;
    const out = demo.stdout();
    expect(exit, `stderr: ${demo.stderr()}\n${out}`).toEqual({ code: 0, signal: null });
    // What the bot answered: the chat after the demo's own start-up banner.
    const chat = out.slice(out.indexOf('Ready.'));
    expect(chat).toContain('› /gpu waitlist\n');
    expect(chat).toContain('Denied by @bob');
    expect(chat).not.toContain('You have sent');
    const named = OPERATIONS.filter((op) => new RegExp(`\\b${op}\\b`).test(chat));
    expect(named, chat).toEqual([]);
    expect(chat).not.toMatch(/\bshape [ABC]\b/);
  }, 300_000);
});
