import type { GpuCommand, GpuCommandKind } from '../commands/command-schema.js';
import { commandPath } from '../commands/command-schema.js';

// How each subcommand is answered. The listener answers `direct` ones itself from the store; every
// other one becomes a job. `ephemeral` jobs answer the requester alone, in place of the listener's
// "looking…" note; `channel` jobs post a message everyone sees and edit it as the job moves;
// `dm` jobs send their result to the requester in a direct message.

export type Delivery = 'direct' | 'ephemeral' | 'channel' | 'dm';

const DELIVERY: Record<GpuCommandKind, Delivery> = {
  help: 'direct',
  projects: 'ephemeral',
  project: 'direct',
  'project.use': 'channel',
  ls: 'ephemeral',
  show: 'ephemeral',
  create: 'channel',
  start: 'channel',
  stop: 'channel',
  rm: 'channel',
  capacity: 'ephemeral',
  configs: 'ephemeral',
  keys: 'ephemeral',
  'keys.add': 'channel',
  'keys.rm': 'channel',
  fs: 'ephemeral',
  'fs.create': 'channel',
  'fs.rm': 'channel',
  'k8s.ls': 'ephemeral',
  'k8s.show': 'ephemeral',
  'k8s.create': 'channel',
  'k8s.register': 'channel',
  'k8s.rm': 'channel',
  'k8s.upgrade': 'channel',
  'k8s.label': 'channel',
  'k8s.pools': 'ephemeral',
  'k8s.pool.add': 'channel',
  'k8s.pool.rm': 'channel',
  'k8s.kubeconfig': 'dm',
  'slurm.ls': 'ephemeral',
  'slurm.show': 'ephemeral',
  'slurm.create': 'channel',
  'slurm.rm': 'channel',
  'slurm.pools': 'ephemeral',
  'slurm.pool.add': 'channel',
  'slurm.pool.rm': 'channel',
  'slurm.users': 'ephemeral',
  'slurm.adduser': 'channel',
  'slurm.rmuser': 'channel',
  'slurm.sudo': 'channel',
  metrics: 'channel',
  'metrics.query': 'channel',
  watch: 'direct',
  jobs: 'direct',
  approvals: 'direct',
  waitlist: 'direct',
  'waitlist.add': 'direct',
  'waitlist.rm': 'direct',
  audit: 'direct',
};

export function deliveryOf(kind: GpuCommandKind): Delivery {
  return DELIVERY[kind];
}

/** The request as a person would type it, for messages and the job log (commands carry no secrets). */
export function describeCommand(command: GpuCommand): string {
  const c = command as Record<string, unknown>;
  const words = [`/gpu ${commandPath(command.kind)}`];
  for (const field of ['cluster', 'instance', 'name', 'project', 'type', 'version', 'size', 'pool', 'user']) {
    const value = c[field];
    if (typeof value === 'string') words.push(value);
  }
  if (typeof c.count === 'number') words.push(String(c.count));
  if (command.kind === 'slurm.sudo') words.push(command.sudo ? 'on' : 'off');
  return words.join(' ');
}
