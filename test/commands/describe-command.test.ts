import { describe, expect, it } from 'vitest';
import { addFamily } from '../../src/commands/handlers.js';
import { parseCommand } from '../../src/commands/parse-command.js';
import { COMMANDS, describeCommand, type GpuCommand } from '../../src/commands/registry.js';
import { handlers } from '../fixtures/clone-family/handlers.js';
import { specs } from '../fixtures/clone-family/specs.js';

// The request as a person would type it: what approval cards, the job log, the audit trail, the
// digest and the page buttons show. It is read from each spec (its usage line and example), so a
// command whose fields have names of their own is described as typed, and every built-in command reads
// as it always has.

addFamily({ specs, handlers });

function described(text: string): string {
  const parsed = parseCommand(text);
  if (!parsed.ok) throw new Error(`"${text}" does not parse: ${parsed.error.message}`);
  return describeCommand(parsed.command);
}

// Typed → described, for every built-in subcommand: most flags, topics and free text are left out; a
// default count is shown.
const BUILT_IN: readonly (readonly [string, string])[] = [
  ['help k8s', '/gpu help'],
  ['projects --page 2', '/gpu projects --page 2'],
  ['project', '/gpu project'],
  ['project use research', '/gpu project use research'],
  ['ls', '/gpu ls'],
  ['ls --page 3', '/gpu ls --page 3'],
  ['show train-01', '/gpu show train-01'],
  [
    'create train-01 h100-hgx-80gb.1x --image ubuntu22.04 --fs datasets --tag team=vision',
    '/gpu create train-01 h100-hgx-80gb.1x',
  ],
  ['create', '/gpu create'],
  ['start train-01', '/gpu start train-01'],
  ['stop train-01', '/gpu stop train-01'],
  ['rm train-01', '/gpu rm train-01'],
  ['schedule start train-01 weekdays 07:30', '/gpu schedule start train-01 weekdays 07:30'],
  [
    'schedule stop team=ml weekdays 20:00 --tz Europe/Paris',
    '/gpu schedule stop team=ml weekdays 20:00 --tz Europe/Paris',
  ],
  ['schedules', '/gpu schedules'],
  ['schedule rm s-3f9a2c', '/gpu schedule rm s-3f9a2c'],
  ['capacity', '/gpu capacity'],
  ['configs', '/gpu configs'],
  ['keys', '/gpu keys'],
  [
    'keys add laptop ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFuyvIwN8SVrspCLSMqeCCUbe1WBH+UgcwkB1g3duGfL ada@laptop',
    '/gpu keys add laptop',
  ],
  ['keys rm laptop', '/gpu keys rm laptop'],
  ['fs', '/gpu fs'],
  ['fs show datasets', '/gpu fs show datasets'],
  ['fs create datasets 512Gi', '/gpu fs create datasets 512Gi'],
  ['fs rm datasets', '/gpu fs rm datasets'],
  ['k8s ls', '/gpu k8s ls'],
  ['k8s show prod', '/gpu k8s show prod'],
  ['k8s create prod v1.31', '/gpu k8s create prod v1.31'],
  ['k8s register', '/gpu k8s register'],
  ['k8s rm prod', '/gpu k8s rm prod'],
  ['k8s upgrade prod v1.32', '/gpu k8s upgrade prod v1.32'],
  ['k8s label prod team=ml', '/gpu k8s label prod'],
  ['k8s pools prod --page 2', '/gpu k8s pools prod --page 2'],
  ['k8s pool add prod gpu-a h100-hgx-80gb.8x 2', '/gpu k8s pool add prod gpu-a h100-hgx-80gb.8x 2'],
  ['k8s pool add prod', '/gpu k8s pool add prod'],
  ['k8s pool rm prod gpu-a', '/gpu k8s pool rm prod gpu-a'],
  ['k8s kubeconfig prod', '/gpu k8s kubeconfig prod'],
  ['slurm ls', '/gpu slurm ls'],
  ['slurm show hpc', '/gpu slurm show hpc'],
  ['slurm create hpc', '/gpu slurm create hpc'],
  ['slurm rm hpc', '/gpu slurm rm hpc'],
  ['slurm pools hpc', '/gpu slurm pools hpc'],
  ['slurm pool add hpc compute a100-sxm4-80gb.4x 4', '/gpu slurm pool add hpc compute a100-sxm4-80gb.4x 4'],
  ['slurm pool rm hpc compute', '/gpu slurm pool rm hpc compute'],
  ['slurm users hpc --page 2', '/gpu slurm users hpc --page 2'],
  ['slurm adduser hpc --sudo --username ada', '/gpu slurm adduser hpc'],
  ['slurm rmuser hpc ada', '/gpu slurm rmuser hpc ada'],
  ['slurm sudo hpc ada off', '/gpu slurm sudo hpc ada off'],
  ['metrics train-01 --range 6h', '/gpu metrics train-01'],
  ['metrics query avg(DCGM_FI_DEV_GPU_UTIL) --range 1d', '/gpu metrics query'],
  ['watch on', '/gpu watch'],
  ['jobs', '/gpu jobs'],
  ['spend', '/gpu spend'],
  ['spend @U0ADA last month', '/gpu spend @U0ADA last month'],
  ['spend h100-hgx-80gb.8x this week', '/gpu spend h100-hgx-80gb.8x this week'],
  ['budget', '/gpu budget'],
  ['approvals', '/gpu approvals'],
  ['waitlist', '/gpu waitlist'],
  ['waitlist h100-hgx-80gb.8x 2', '/gpu waitlist h100-hgx-80gb.8x 2'],
  ['waitlist h100-hgx-80gb.8x', '/gpu waitlist h100-hgx-80gb.8x 1'],
  ['waitlist rm w-3f9a', '/gpu waitlist rm w-3f9a'],
  ['audit 50', '/gpu audit'],
];

describe('how a request is described', () => {
  it.each(BUILT_IN)('/gpu %s reads "%s"', (typed, expected) => {
    expect(described(typed)).toBe(expected);
  });

  it('has a line for every built-in subcommand, so a new one is described on purpose', () => {
    const kinds = new Set(
      BUILT_IN.map(([typed]) => {
        const parsed = parseCommand(typed);
        return parsed.ok ? parsed.command.kind : typed;
      }),
    );
    expect(COMMANDS.map((s) => s.kind).filter((k) => !kinds.has(k))).toEqual([]);
  });

  it('describes a command whose fields are not named like any other command’s as it was typed', () => {
    // The clone's fields are `source` and `name`: a list of known field names would show the name
    // alone ("/gpu clone copy-3"), hiding which machine it copies from the approver.
    const clone = { kind: 'clone', source: 'train-01', name: 'copy-3' } as unknown as GpuCommand;
    expect(describeCommand(clone)).toBe('/gpu clone train-01 copy-3');
  });

  it('gives an added command a description that parses back to the same command', () => {
    // Page buttons carry a description and the listener parses it again: it must be typeable.
    const clone = { kind: 'clone', source: 'train-01', name: 'copy-3' } as unknown as GpuCommand;
    expect(parseCommand(describeCommand(clone).replace(/^\/gpu /, ''))).toEqual({ ok: true, command: clone });
  });
});
