import { describe, expect, it } from 'vitest';
import { ROUTES, withOverrides } from '../../src/cloud/routes.js';
import type { Shape } from '../../src/cloud/shape.js';
import {
  kindsMissingIn,
  operationsFor,
  orphanWarning,
  unavailableIn,
} from '../../src/commands/availability.js';
import { parseCommand } from '../../src/commands/parse-command.js';
import type { GpuCommand, GpuCommandKind } from '../../src/commands/registry.js';

const UUID = '3f1c2a9e-8b7d-4c1e-9f2a-1b2c3d4e5f60';

function command(text: string): GpuCommand {
  const result = parseCommand(text);
  if (!result.ok) throw new Error(result.error.message);
  return result.command;
}

// What each shape lacks, written out from the cloud's endpoint tables (not derived from the code).
const MISSING: Readonly<Record<Shape, readonly GpuCommandKind[]>> = {
  A: [
    'projects',
    'fs',
    'fs.show',
    'fs.create',
    'fs.rm',
    'k8s.pool.add',
    'k8s.pool.rm',
    'slurm.create',
    'slurm.rm',
    'slurm.pool.add',
    'slurm.pool.rm',
  ],
  B: [
    'projects',
    'fs',
    'fs.rm',
    'k8s.register',
    'k8s.upgrade',
    'k8s.label',
    'slurm.users',
    'slurm.adduser',
    'slurm.rmuser',
    'slurm.sudo',
  ],
  C: [
    'k8s.register',
    'k8s.upgrade',
    'k8s.label',
    'k8s.kubeconfig',
    'slurm.create',
    'slurm.rm',
    'slurm.pool.add',
    'slurm.pool.rm',
    'slurm.users',
    'slurm.adduser',
    'slurm.rmuser',
    'slurm.sudo',
  ],
};

describe('unavailableIn', () => {
  it.each(['A', 'B', 'C'] as const)('shape %s lacks exactly the subcommands its API lacks', (shape) => {
    expect(kindsMissingIn(shape).sort()).toEqual([...MISSING[shape]].sort());
  });

  it('says in words what the cloud cannot do and what to do instead, never an operation id', () => {
    const instead = "Use the cloud's own console or CLI for it; `/gpu help` lists what works here.";
    expect(unavailableIn(command('fs rm data'), 'B')).toBe(
      `\`/gpu fs rm\` does not work with this cloud: its API cannot delete filesystems. ${instead}`,
    );
    expect(unavailableIn(command('slurm adduser hpc'), 'C')).toBe(
      `\`/gpu slurm adduser\` does not work with this cloud: its API cannot add Slurm users. ${instead}`,
    );
    expect(unavailableIn(command('k8s register'), 'B')).toBe(
      `\`/gpu k8s register\` does not work with this cloud: its API cannot register Kubernetes clusters. ${instead}`,
    );
    expect(unavailableIn(command('capacity'), 'A')).toBeNull();
    expect(unavailableIn(command('waitlist h100 2'), 'B')).toBeNull();
  });

  it('warns before creating what the cloud cannot list or delete', () => {
    expect(orphanWarning('fs.create', ROUTES.B)).toBe(
      ":information_source: This cloud's API can create filesystems but cannot list or delete them: gpuops will tell you the new id, and you will need the cloud's own console to see or delete it later.",
    );
    expect(orphanWarning('fs.create', ROUTES.C)).toBeUndefined();
    expect(orphanWarning('create', ROUTES.B)).toBeUndefined();
  });

  it('keeps platform, metrics and bot-only commands available everywhere', () => {
    for (const shape of ['A', 'B', 'C'] as const) {
      for (const text of [
        'help',
        'configs',
        'keys',
        'keys add',
        'keys rm laptop',
        'jobs',
        'approvals',
        'audit',
        'waitlist',
        'metrics query up',
        'metrics a',
        'spend',
        'budget',
        'watch on',
        'ls',
        'create',
        'project',
      ]) {
        expect(unavailableIn(command(text), shape), `${text} in ${shape}`).toBeNull();
      }
    }
  });

  it('serves a Slurm cluster from the list in shape C, which has no get', () => {
    expect(unavailableIn(command('slurm show hpc'), 'C')).toBeNull();
  });

  it('needs a way to resolve names: project and filesystem names where the shape cannot list them', () => {
    expect(unavailableIn(command('project use research'), 'B')).toBe(
      '`/gpu project use` does not work with this cloud: its API cannot list projects. Give the project id instead of its name.',
    );
    expect(unavailableIn(command(`project use ${UUID}`), 'B')).toBeNull();
    expect(unavailableIn(command('project use research'), 'C')).toBeNull();
    expect(unavailableIn(command('create a t --fs data'), 'B')).toBe(
      '`/gpu create --fs` does not work with this cloud: its API cannot list filesystems. Give filesystem ids instead of names.',
    );
    expect(unavailableIn(command(`create a t --fs ${UUID}`), 'B')).toBeNull();
    expect(unavailableIn(command('create a t --fs data'), 'C')).toBeNull();
    expect(unavailableIn(command(`create a t --fs ${UUID}`), 'A')).toContain(
      'Instances here take no filesystems',
    );
  });

  it('follows CLOUD_ROUTES overrides when given the effective table', () => {
    const table = withOverrides(ROUTES.B, { addSlurmUser: 'POST /slurm/clusters/{id}/users 201' });
    expect(unavailableIn(command('slurm adduser hpc'), 'B')).not.toBeNull();
    expect(unavailableIn(command('slurm adduser hpc'), 'B', table)).toBeNull();
  });

  it('lists the operations a command may call', () => {
    expect(operationsFor(command('slurm sudo hpc ada on'))).toEqual([
      'getSlurmUser',
      'updateSlurmUser',
      'listSlurmClusters',
    ]);
    expect(operationsFor(command(`start ${UUID}`))).toEqual(['startInstance']);
    expect(operationsFor(command('start train-01'))).toEqual(['startInstance', 'listInstances']);
  });
});
