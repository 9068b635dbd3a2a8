import { type Operation, ROUTES, type RouteTable } from '../cloud/routes.js';
import { UUID } from '../cloud/rules.js';
import type { Shape } from '../cloud/shape.js';
import { commandPath, type GpuCommand, type GpuCommandKind } from './command-schema.js';

// Which infrastructure operations a command needs, checked against the shape's route table (the pure
// data module, never the cloud client). Platform API (keys, configs), metrics API and bot-only
// commands need none and are available in every shape.

/** One operation, or any one of several (an array) when either can serve the command. */
export type Requirement = Operation | readonly Operation[];

/** What each kind needs whatever its arguments. */
export const BASE_REQUIREMENTS: Readonly<Record<GpuCommandKind, readonly Requirement[]>> = {
  help: [],
  projects: ['listProjects'],
  project: [],
  'project.use': [],
  ls: ['listInstances'],
  show: ['getInstance'],
  create: ['createInstance'],
  start: ['startInstance'],
  stop: ['stopInstance'],
  rm: ['deleteInstance'],
  capacity: ['listCapacity'],
  configs: [],
  keys: [],
  'keys.add': [],
  'keys.rm': [],
  fs: ['listFilesystems'],
  'fs.create': ['createFilesystem'],
  'fs.rm': ['deleteFilesystem'],
  'k8s.ls': ['listK8sClusters'],
  'k8s.show': ['getK8sCluster'],
  'k8s.create': ['createK8sCluster'],
  'k8s.register': ['registerK8sCluster'],
  'k8s.rm': ['deleteK8sCluster'],
  'k8s.upgrade': ['updateK8sCluster'],
  'k8s.label': ['updateK8sCluster'],
  'k8s.pools': ['listK8sNodePools'],
  'k8s.pool.add': ['createK8sNodePool'],
  'k8s.pool.rm': ['deleteK8sNodePool'],
  'k8s.kubeconfig': ['getKubeconfig'],
  'slurm.ls': ['listSlurmClusters'],
  // Shape C has no get, but its list carries everything a C Slurm cluster has (id and name).
  'slurm.show': [['getSlurmCluster', 'listSlurmClusters']],
  'slurm.create': ['createSlurmCluster'],
  'slurm.rm': ['deleteSlurmCluster'],
  'slurm.pools': ['listSlurmNodePools'],
  'slurm.pool.add': ['createSlurmNodePool'],
  'slurm.pool.rm': ['deleteSlurmNodePool'],
  'slurm.users': ['listSlurmUsers'],
  'slurm.adduser': ['addSlurmUser'],
  'slurm.rmuser': ['deleteSlurmUser'],
  // The update needs the user's keys, which only a get returns.
  'slurm.sudo': ['getSlurmUser', 'updateSlurmUser'],
  metrics: ['listInstances'],
  'metrics.query': [],
  watch: ['listInstances'],
  jobs: [],
  approvals: [],
  waitlist: [],
  'waitlist.add': ['listCapacity'],
  'waitlist.rm': [],
  audit: [],
};

interface Need {
  readonly requirement: Requirement;
  /** Shown after the reason, when there is something the person can do instead. */
  readonly hint?: string;
  /** The words of the command shown in the message, when an option (not the command) is the problem. */
  readonly path?: string;
}

const isId = (ref: string): boolean => UUID.test(ref);

/** Operations the command needs: its kind's, plus name lookups and options that need more. */
function needsOf(command: GpuCommand): Need[] {
  // `/gpu waitlist` alone lists; only adding to it needs the capacity listing.
  const path = command.kind === 'waitlist.add' ? 'waitlist <type>' : undefined;
  const needs: Need[] = BASE_REQUIREMENTS[command.kind].map((requirement) => ({
    requirement,
    ...(path ? { path } : {}),
  }));
  switch (command.kind) {
    case 'project.use':
      if (!isId(command.project)) {
        needs.push({ requirement: 'listProjects', hint: 'Give the project id instead of its name.' });
      }
      break;
    case 'create':
      if (!command.modal && command.filesystems.length > 0) {
        needs.push({
          requirement: 'getFilesystem',
          path: 'create --fs',
          hint: 'Instances here take no filesystems; leave out --fs.',
        });
        if (command.filesystems.some((fs) => !isId(fs))) {
          needs.push({
            requirement: 'listFilesystems',
            path: 'create --fs',
            hint: 'Give filesystem ids instead of names.',
          });
        }
      }
      break;
    case 'show':
    case 'start':
    case 'stop':
    case 'rm':
      if (!isId(command.instance)) {
        needs.push({ requirement: 'listInstances', hint: 'Give the instance id instead of its name.' });
      }
      break;
    case 'fs.rm':
      if (!isId(command.name)) {
        needs.push({ requirement: 'listFilesystems', hint: 'Give the filesystem id instead of its name.' });
      }
      break;
    case 'k8s.pool.rm':
      if (!isId(command.pool)) {
        needs.push({ requirement: 'listK8sNodePools', hint: 'Give the node pool id instead of its name.' });
      }
      break;
    case 'slurm.pool.rm':
      if (!isId(command.pool)) {
        needs.push({ requirement: 'listSlurmNodePools', hint: 'Give the node pool id instead of its name.' });
      }
      break;
    default:
      break;
  }
  if ('cluster' in command && !isId(command.cluster)) {
    const list = command.kind.startsWith('k8s.') ? 'listK8sClusters' : 'listSlurmClusters';
    needs.push({ requirement: list, hint: 'Give the cluster id instead of its name.' });
  }
  return needs;
}

/** Every operation the command may call, for workers and tests. */
export function operationsFor(command: GpuCommand): Requirement[] {
  return needsOf(command).map((need) => need.requirement);
}

function satisfied(requirement: Requirement, table: RouteTable): boolean {
  const any: readonly Operation[] = typeof requirement === 'string' ? [requirement] : requirement;
  return any.some((op) => table[op] !== undefined);
}

function firstOperation(requirement: Requirement): Operation {
  return typeof requirement === 'string' ? requirement : requirement[0]!;
}

/**
 * Null when the shape can serve the command, else one sentence saying which operation is missing,
 * e.g. "`/gpu fs rm` is not available in shape B: this cloud has no 'deleteFilesystem' operation."
 * `table` defaults to the shape's built-in routes; pass the effective table when CLOUD_ROUTES adds some.
 */
export function unavailableIn(
  command: GpuCommand,
  shape: Shape,
  table: RouteTable = ROUTES[shape],
): string | null {
  for (const need of needsOf(command)) {
    if (satisfied(need.requirement, table)) continue;
    const path = need.path ?? commandPath(command.kind);
    const base = `\`/gpu ${path}\` is not available in shape ${shape}: this cloud has no '${firstOperation(need.requirement)}' operation.`;
    return need.hint ? `${base} ${need.hint}` : base;
  }
  return null;
}

/** Kinds the shape lacks whatever the arguments, for help and docs. */
export function kindsMissingIn(shape: Shape, table: RouteTable = ROUTES[shape]): GpuCommandKind[] {
  return (Object.keys(BASE_REQUIREMENTS) as GpuCommandKind[]).filter(
    (kind) => !BASE_REQUIREMENTS[kind].every((requirement) => satisfied(requirement, table)),
  );
}
