import { z } from 'zod';
import type { Operation } from '../cloud/routes.js';
import type { ArgReader } from './arg-reader.js';
import { count, isId, lookupNeed, name, page } from './schema-kit.js';
import type { Need, Reference } from './spec.js';
import { MAX_COUNT } from './value-rules.js';

// What Kubernetes and Slurm subcommands share: a cluster named first, node pools added and removed
// the same way, and the lookups a name (not an id) needs.

export const CLUSTER_ARG = 'the cluster name or id';

export type ClusterFamily = 'k8s' | 'slurm';

/** The cloud operations behind what both families do alike. */
export interface ClusterOperations {
  readonly listClusters: Operation;
  readonly deleteCluster: Operation;
  readonly listPools: Operation;
  readonly createPool: Operation;
  readonly deletePool: Operation;
}

export const CLUSTER_OPERATIONS: Readonly<Record<ClusterFamily, ClusterOperations>> = {
  k8s: {
    listClusters: 'listK8sClusters',
    deleteCluster: 'deleteK8sCluster',
    listPools: 'listK8sNodePools',
    createPool: 'createK8sNodePool',
    deletePool: 'deleteK8sNodePool',
  },
  slurm: {
    listClusters: 'listSlurmClusters',
    deleteCluster: 'deleteSlurmCluster',
    listPools: 'listSlurmNodePools',
    createPool: 'createSlurmNodePool',
    deletePool: 'deleteSlurmNodePool',
  },
};

/** The cluster a subcommand names first. */
export function readCluster(r: ArgReader, positionals: readonly string[]): string {
  return r.name(positionals[0], CLUSTER_ARG);
}

/** The listing that turns a cluster name into an id. */
export const clusterNeed = (family: ClusterFamily, cluster: string): Need[] =>
  lookupNeed(cluster, CLUSTER_OPERATIONS[family].listClusters, 'cluster');

/** The cluster a subcommand names must exist: checked before the request is queued (`refers`). */
export const clusterRefers = (family: ClusterFamily, cluster: string): Reference[] => [
  { what: family === 'k8s' ? 'k8s cluster' : 'slurm cluster', ref: cluster },
];

/** A subcommand whose one argument is the cluster. */
export const onCluster = <K extends string>(kind: K) => z.object({ kind: z.literal(kind), cluster: name });

/** A paged list of one cluster's parts: the cluster, and `--page N`. */
export const onClusterPaged = <K extends string>(kind: K) =>
  z.object({ kind: z.literal(kind), cluster: name, page });

/** The parser of a paged list of one cluster's parts. */
export const pagedCluster =
  <K extends string>(kind: K) =>
  (r: ArgReader): { kind: K; cluster: string; page?: number } => {
    const { name: cluster, ...rest } = r.pagedName(CLUSTER_ARG);
    return { kind, cluster, ...rest };
  };

export const poolAddSchema = <K extends string>(kind: K) =>
  z.discriminatedUnion('modal', [
    z.object({ kind: z.literal(kind), modal: z.literal(true), cluster: name }),
    z.object({
      kind: z.literal(kind),
      modal: z.literal(false),
      cluster: name,
      name,
      type: name,
      count: count(MAX_COUNT),
    }),
  ]);

export const poolRmSchema = <K extends string>(kind: K) =>
  z.object({ kind: z.literal(kind), cluster: name, pool: name });

/** `pool add <cluster> [<name> <type> <count>]`: only the cluster opens the form. */
export function parsePoolAdd<K extends string>(r: ArgReader, kind: K) {
  const a = r.args();
  const cluster = readCluster(r, a.positionals);
  if (a.positionals.length === 1) return { kind, modal: true as const, cluster };
  const pool = r.name(a.positionals[1], 'a name for the node pool');
  const type = r.name(a.positionals[2], 'the instance type after the pool name');
  const countText = a.positionals[3];
  if (countText === undefined) r.fail(`${r.label()} needs the number of nodes after the instance type`);
  const nodes = r.count(countText, MAX_COUNT, 'node count');
  r.noMore(a, 4);
  return { kind, modal: false as const, cluster, name: pool, type, count: nodes };
}

export function parsePoolRm<K extends string>(r: ArgReader, kind: K) {
  const a = r.args();
  const cluster = readCluster(r, a.positionals);
  const pool = r.name(a.positionals[1], 'the node pool name or id');
  r.noMore(a, 2);
  return { kind, cluster, pool };
}

export const poolRmNeeds = (family: ClusterFamily, c: { cluster: string; pool: string }): Need[] => [
  ...(isId(c.pool)
    ? []
    : [
        {
          requirement: CLUSTER_OPERATIONS[family].listPools,
          hint: 'Give the node pool id instead of its name.',
        },
      ]),
  ...clusterNeed(family, c.cluster),
];
