import type {
  InfraClient,
  Instance,
  KubernetesCluster,
  KubernetesNode,
  KubernetesNodePool,
  SlurmCluster,
  SlurmNodePool,
} from '../cloud/index.js';
import { resourceList, type WatchedResource, withList } from '../store/watch-snapshots.js';
import { sameResource } from './diff-snapshot.js';

// One look at a project for the state watcher, with list calls only: instances, Kubernetes and Slurm
// clusters, and their node pools with their nodes, where the shape has them. The number of calls does
// not grow with the number of instances: 1 for instances, 1 per cluster family, and for node pools 1
// per family where the route is flat (shape C) or 1 per cluster where pools are listed under their
// cluster (shapes A and B).

/** What one look listed, before it is compared with the last look's resources. */
export interface Listings {
  readonly instances: readonly Instance[];
  readonly k8s: readonly KubernetesCluster[];
  readonly k8sPools: readonly KubernetesNodePool[];
  readonly slurm: readonly SlurmCluster[];
  /** Each Slurm pool with the name of its cluster, where the listing says it. */
  readonly slurmPools: ReadonlyArray<{ readonly pool: SlurmNodePool; readonly cluster?: string }>;
  /** How many API calls this look took (docs/watch.md, "API cost"). */
  readonly calls: number;
}

const keyOf = (kind: WatchedResource['kind'], id: string) => `${kind}:${id}`;

/** Own keys of a small record. */
function sizeOf(record: Readonly<Record<string, string>>): number {
  let n = 0;
  for (const _ in record) n++;
  return n;
}

/** Whether the last look's resource `before` is how instance `i` is listed now. */
function sameInstance(before: WatchedResource, i: Instance, ip: string): boolean {
  return (
    before.name === i.name &&
    before.fields.state === i.state &&
    before.fields.ip === ip &&
    before.fields.type === i.type &&
    before.nodes === undefined &&
    sizeOf(before.fields) === 3
  );
}

/**
 * An instance as the watcher compares it. When the previous look saw it the same, that look's object
 * is handed on: a fleet of 10,000 mostly unchanged machines then costs no new objects, and the diff
 * and the snapshot store tell it unchanged by identity. `at` is the last look's resource at the same
 * place in the listing, which is usually this machine: then no key is built or looked up.
 */
function instanceResource(
  i: Instance,
  at: WatchedResource | undefined,
  previous: Readonly<Record<string, WatchedResource>> | undefined,
): WatchedResource {
  const ip = i.ip ?? '';
  if (at !== undefined && at.kind === 'instance' && at.id === i.id && sameInstance(at, i, ip)) return at;
  const key = keyOf('instance', i.id);
  const before = previous?.[key];
  if (before !== undefined && sameInstance(before, i, ip)) return before;
  return {
    key,
    kind: 'instance',
    id: i.id,
    name: i.name,
    fields: { state: i.state, ip, type: i.type },
  };
}

function k8sClusterResource(c: KubernetesCluster): WatchedResource {
  return {
    key: keyOf('k8s-cluster', c.id),
    kind: 'k8s-cluster',
    id: c.id,
    name: c.name,
    fields: { version: c.version, ...(c.status?.type ? { status: c.status.type } : {}) },
  };
}

/** `ready` or `ready, not Ready`: the node's state and its Ready condition when that says otherwise. */
export function k8sNodeSummary(node: KubernetesNode): string {
  const ready = node.conditions.find((c) => c.type === 'Ready')?.status;
  return ready === undefined || ready === 'True' ? node.state : `${node.state}, not Ready (${ready})`;
}

function k8sPoolResource(p: KubernetesNodePool): WatchedResource {
  return {
    key: keyOf('k8s-pool', p.id),
    kind: 'k8s-pool',
    id: p.id,
    name: p.name,
    parent: p.cluster,
    fields: { count: String(p.count), version: p.version, type: p.type },
    ...(p.nodes ? { nodes: Object.fromEntries(p.nodes.map((n) => [n.name, k8sNodeSummary(n)])) } : {}),
  };
}

function slurmClusterResource(c: SlurmCluster): WatchedResource {
  return {
    key: keyOf('slurm-cluster', c.id),
    kind: 'slurm-cluster',
    id: c.id,
    name: c.name,
    fields: c.version !== undefined ? { version: c.version } : {},
  };
}

function slurmPoolResource(p: SlurmNodePool, cluster: string | undefined): WatchedResource {
  return {
    key: keyOf('slurm-pool', p.id),
    kind: 'slurm-pool',
    id: p.id,
    name: p.name,
    ...(cluster !== undefined ? { parent: cluster } : {}),
    fields: { type: p.type, ...(p.count !== undefined ? { count: String(p.count) } : {}) },
    ...(p.nodes
      ? {
          nodes: Object.fromEntries(
            p.nodes.map((n) => [n.name, [...n.states].sort().join('+') || 'unknown']),
          ),
        }
      : {}),
  };
}

interface ResourceSet {
  readonly add: (r: WatchedResource) => void;
  /** The record, with its array registered beside it (store/watch-snapshots.ts). */
  readonly done: () => Record<string, WatchedResource>;
}

/** A look's resources being gathered, filled in place; a listing that names one twice keeps the first. */
function resourceSet(): ResourceSet {
  const resources: Record<string, WatchedResource> = {};
  const list: WatchedResource[] = [];
  return {
    add: (r) => {
      if (r.key in resources) return;
      resources[r.key] = r;
      list.push(r);
    },
    done: () => withList(resources, list),
  };
}

/**
 * The listed resources as the watcher compares them, unchanged ones as the previous look's objects.
 * When every one is the previous look's, in the previous look's order, the previous record itself is
 * the answer: a look that finds nothing changed builds no record of the fleet (10,000 keys), and the
 * diff tells it unchanged at once.
 */
export function resourcesOf(
  listed: Omit<Listings, 'calls'>,
  previous?: Readonly<Record<string, WatchedResource>>,
): Record<string, WatchedResource> {
  const before = previous ? resourceList(previous) : [];
  // Undefined while every resource so far is the previous look's at its place.
  let set: ResourceSet | undefined = previous ? undefined : resourceSet();
  let n = 0;
  // A record of the first n resources, which were all the previous look's.
  const copyOfFirst = (): ResourceSet => {
    const copy = resourceSet();
    for (let j = 0; j < n; j++) copy.add(before[j]!);
    return copy;
  };
  const add = (r: WatchedResource) => {
    if (set === undefined) {
      if (r === before[n]) {
        n++;
        return;
      }
      set = copyOfFirst();
    }
    set.add(r);
    n++;
  };
  /** The previous look's equal object for a resource built afresh (clusters and pools are few). */
  const handOn = (r: WatchedResource): WatchedResource => {
    const at = before[n];
    const equal = at !== undefined && at.key === r.key ? at : previous?.[r.key];
    return equal !== undefined && sameResource(equal, r) ? equal : r;
  };
  for (const i of listed.instances) add(instanceResource(i, before[n], previous));
  for (const c of listed.k8s) add(handOn(k8sClusterResource(c)));
  for (const c of listed.slurm) add(handOn(slurmClusterResource(c)));
  for (const p of listed.k8sPools) add(handOn(k8sPoolResource(p)));
  for (const { pool, cluster } of listed.slurmPools) add(handOn(slurmPoolResource(pool, cluster)));
  if (set === undefined) {
    if (n === before.length) return previous as Record<string, WatchedResource>;
    set = copyOfFirst();
  }
  return set.done();
}

/** Whether the shape lists pools per cluster (a `{clusterId}` in the route) or all at once. */
function nestedPools(cloud: InfraClient, op: 'listK8sNodePools' | 'listSlurmNodePools'): boolean {
  return cloud.routes[op]?.path.includes('{clusterId}') ?? false;
}

/**
 * Lists everything watched in a project, every call done before any resource is built (so a look's
 * API time and its comparison are apart: docs/performance.md). Any failed call fails the look: a half
 * listing would read as deletions.
 */
export async function listProject(
  cloud: InfraClient,
  projectId: string,
  signal?: AbortSignal,
): Promise<Listings> {
  const call = { projectId, ...(signal ? { signal } : {}) };
  let calls = 0;
  const counted = <T>(p: Promise<T>) => {
    calls++;
    return p;
  };

  const instancesP = cloud.supports('listInstances')
    ? counted(cloud.listInstances(call))
    : Promise.resolve([]);
  const k8sP = cloud.supports('listK8sClusters') ? counted(cloud.listK8sClusters(call)) : Promise.resolve([]);
  const slurmP = cloud.supports('listSlurmClusters')
    ? counted(cloud.listSlurmClusters(call))
    : Promise.resolve([]);
  const [instances, k8s, slurm] = await Promise.all([instancesP, k8sP, slurmP]);

  let k8sPools: KubernetesNodePool[] = [];
  if (cloud.supports('listK8sNodePools') && k8s.length > 0) {
    k8sPools = nestedPools(cloud, 'listK8sNodePools')
      ? (await Promise.all(k8s.map((c) => counted(cloud.listK8sNodePools({ clusterId: c.id }, call))))).flat()
      : await counted(cloud.listK8sNodePools({}, call));
  }
  let slurmPools: Listings['slurmPools'] = [];
  if (cloud.supports('listSlurmNodePools') && slurm.length > 0) {
    if (nestedPools(cloud, 'listSlurmNodePools')) {
      const lists = await Promise.all(
        slurm.map((c) => counted(cloud.listSlurmNodePools({ clusterId: c.id }, call))),
      );
      slurmPools = lists.flatMap((pools, i) => pools.map((pool) => ({ pool, cluster: slurm[i]!.name })));
    } else {
      // Shape C's flat listing does not say which cluster a pool is in.
      const pools = await counted(cloud.listSlurmNodePools({}, call));
      const only = slurm.length === 1 ? slurm[0]!.name : undefined;
      slurmPools = pools.map((pool) => (only !== undefined ? { pool, cluster: only } : { pool }));
    }
  }
  return { instances, k8s, k8sPools, slurm, slurmPools, calls };
}
