import type { GpuCommand, GpuCommandKind } from '../../commands/registry.js';
import { PermanentJobError } from '../job-errors.js';
import type { JobRun, Outcome } from '../job-run.js';
import { listCapacity, listConfigurations } from './capacity.js';
import { createFilesystem, deleteFilesystem, listFilesystems } from './filesystems.js';
import {
  createInstance,
  deleteInstance,
  listInstances,
  showInstance,
  startInstance,
  stopInstance,
} from './instances.js';
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
} from './k8s.js';
import { registerK8sCluster } from './k8s-register.js';
import { sendKubeconfig } from './kubeconfig.js';
import { queryMetrics, showMetrics } from './metrics.js';
import { listProjects, useProject } from './projects.js';
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
} from './slurm.js';
import { addKey, listKeys, removeKey } from './ssh-keys.js';

// One processor per subcommand that becomes a job. A kind missing here is answered with a clear
// "not handled by this version" rather than a crash.

type HandlerFor<K extends GpuCommandKind> = (
  run: JobRun,
  command: Extract<GpuCommand, { kind: K }>,
) => Promise<Outcome>;
export type HandlerTable = { [K in GpuCommandKind]?: HandlerFor<K> };

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
  return HANDLERS[kind] as ((run: JobRun, command: GpuCommand) => Promise<Outcome>) | undefined;
}
