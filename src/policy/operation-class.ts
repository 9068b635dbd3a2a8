import { GPU_COMMAND_KINDS, type GpuCommandKind } from '../commands/command-schema.js';

// Every /gpu subcommand belongs to one operation class; the policy sets a minimum role per class and
// may override it per kind. The table is exhaustive (a Record over every kind), so a new subcommand
// cannot ship without a class.

export const OPERATION_CLASSES = ['read', 'operate', 'create', 'destroy', 'admin'] as const;
export type OperationClass = (typeof OPERATION_CLASSES)[number];

export const OPERATION_CLASS_OF: Readonly<Record<GpuCommandKind, OperationClass>> = {
  help: 'read',
  projects: 'read',
  project: 'read',
  'project.use': 'operate',
  ls: 'read',
  show: 'read',
  create: 'create',
  start: 'operate',
  stop: 'operate',
  rm: 'destroy',
  capacity: 'read',
  configs: 'read',
  keys: 'read',
  'keys.add': 'operate',
  'keys.rm': 'operate',
  fs: 'read',
  'fs.create': 'create',
  'fs.rm': 'destroy',
  'k8s.ls': 'read',
  'k8s.show': 'read',
  'k8s.create': 'create',
  'k8s.register': 'create',
  'k8s.rm': 'destroy',
  'k8s.upgrade': 'create',
  'k8s.label': 'create',
  'k8s.pools': 'read',
  'k8s.pool.add': 'create',
  'k8s.pool.rm': 'destroy',
  'k8s.kubeconfig': 'operate',
  'slurm.ls': 'read',
  'slurm.show': 'read',
  'slurm.create': 'create',
  'slurm.rm': 'destroy',
  'slurm.pools': 'read',
  'slurm.pool.add': 'create',
  'slurm.pool.rm': 'destroy',
  'slurm.users': 'read',
  'slurm.adduser': 'operate',
  'slurm.rmuser': 'operate',
  'slurm.sudo': 'admin',
  metrics: 'read',
  'metrics.query': 'read',
  watch: 'operate',
  jobs: 'read',
  approvals: 'read',
  waitlist: 'operate',
  'waitlist.add': 'operate',
  'waitlist.rm': 'operate',
  audit: 'admin',
};

export function operationClassOf(kind: GpuCommandKind): OperationClass {
  return OPERATION_CLASS_OF[kind];
}

/** Kinds of one class, in the order of GPU_COMMAND_KINDS. */
export function kindsOfClass(cls: OperationClass): GpuCommandKind[] {
  return GPU_COMMAND_KINDS.filter((k) => OPERATION_CLASS_OF[k] === cls);
}
