import { PermanentJobError } from '../workers/job-errors.js';
import type { JobRun, Outcome } from '../workers/job-run.js';
import { listCapacity, listConfigurations } from './catalog/handlers.js';
import { createFilesystem, deleteFilesystem, listFilesystems } from './filesystems/handlers.js';
import {
  createInstance,
  deleteInstance,
  listInstances,
  showInstance,
  startInstance,
  stopInstance,
} from './instances/handlers.js';
import {
  addK8sPool,
  createK8sCluster,
  deleteK8sCluster,
  labelK8sCluster,
  listK8sClusters,
  listK8sPools,
  removeK8sPool,
  showK8sCluster,
  upgradeK8sCluster,
} from './k8s/handlers.js';
import { sendKubeconfig } from './k8s/kubeconfig-handler.js';
import { registerK8sCluster } from './k8s/register-handler.js';
import { addKey, listKeys, removeKey } from './keys/handlers.js';
import { queryMetrics, showMetrics } from './metrics/handlers.js';
import { listProjects, useProject } from './projects/handlers.js';
import type { CommandOf, GpuCommand, GpuCommandKind, JobKind } from './registry.js';
import {
  addSlurmPool,
  addSlurmUser,
  createSlurmCluster,
  deleteSlurmCluster,
  listSlurmClusters,
  listSlurmPools,
  listSlurmUsers,
  removeSlurmPool,
  removeSlurmUser,
  setSlurmSudo,
  showSlurmCluster,
} from './slurm/handlers.js';

// One processor per subcommand that becomes a job. The table's type lists every kind whose spec is
// not `direct`, so a command without a handler does not compile.

type HandlerFor<K extends JobKind> = (run: JobRun, command: CommandOf<K>) => Promise<Outcome>;
export type HandlerTable = { readonly [K in JobKind]: HandlerFor<K> };

export const HANDLERS: HandlerTable = {
  projects: listProjects,
  'project.use': useProject,
  ls: listInstances,
  show: showInstance,
  start: startInstance,
  stop: stopInstance,
  rm: deleteInstance,
  create: (run, command) => {
    if (command.modal) throw new Error('a create from the modal arrives with its fields filled in');
    return createInstance(run, command);
  },
  'k8s.ls': listK8sClusters,
  'k8s.show': showK8sCluster,
  'k8s.create': createK8sCluster,
  'k8s.register': registerK8sCluster,
  'k8s.rm': deleteK8sCluster,
  'k8s.upgrade': upgradeK8sCluster,
  'k8s.label': labelK8sCluster,
  'k8s.pools': listK8sPools,
  'k8s.pool.add': addK8sPool,
  'k8s.pool.rm': removeK8sPool,
  'slurm.ls': listSlurmClusters,
  'slurm.show': showSlurmCluster,
  'slurm.create': createSlurmCluster,
  'slurm.rm': deleteSlurmCluster,
  'slurm.pools': listSlurmPools,
  'slurm.pool.add': addSlurmPool,
  'slurm.pool.rm': removeSlurmPool,
  'slurm.users': listSlurmUsers,
  'slurm.adduser': addSlurmUser,
  'slurm.rmuser': removeSlurmUser,
  'slurm.sudo': setSlurmSudo,
  capacity: listCapacity,
  configs: listConfigurations,
  keys: listKeys,
  'keys.add': (run, command) => {
    if (command.modal)
      throw new PermanentJobError('Send the key with the request: /gpu keys add <name> <public key>.');
    return addKey(run, command);
  },
  'keys.rm': removeKey,
  fs: listFilesystems,
  'fs.create': createFilesystem,
  'fs.rm': deleteFilesystem,
  'k8s.kubeconfig': sendKubeconfig,
  metrics: showMetrics,
  'metrics.query': queryMetrics,
};

export function handlerFor(
  kind: GpuCommandKind,
): ((run: JobRun, command: GpuCommand) => Promise<Outcome>) | undefined {
  // Direct kinds have no handler: the listener answers them and never queues one.
  return (
    HANDLERS as Partial<Record<GpuCommandKind, (run: JobRun, command: GpuCommand) => Promise<Outcome>>>
  )[kind];
}
