import {
  CLUSTER_ARG,
  CLUSTER_OPERATIONS,
  type ClusterFamily,
  clusterNeed,
  clusterRefers,
  onCluster,
  onClusterPaged,
  pagedCluster,
  parsePoolAdd,
  parsePoolRm,
  poolAddSchema,
  poolRmNeeds,
  poolRmSchema,
} from './cluster-kit.js';
import type { FormSpec } from './forms/form-kit.js';
import { paged, pagedNoArgs } from './schema-kit.js';
import { defineCommand, type Requirement } from './spec.js';

// The subcommands Kubernetes and Slurm share word for word: list, show and delete clusters, list, add
// and remove node pools. The families differ only in their cloud operations, names, forms and examples.

/** What one family's shared subcommands show. */
export interface ClusterFamilyWords {
  /** In `list <title> clusters`. */
  readonly title: string;
  /** What `show` says it gives, and the operations it needs to give it. */
  readonly show: { readonly summary: string; readonly needs: readonly Requirement[] };
  readonly poolForm: FormSpec;
  /** The examples' cluster and pool, and the instance type and node count of `pool add`'s. */
  readonly example: { readonly cluster: string; readonly pool: string; readonly nodes: string };
}

/** `<family> ls`, `show`, `rm`, `pools`, `pool add` and `pool rm`. */
export function sharedClusterSpecs<const F extends ClusterFamily>(family: F, words: ClusterFamilyWords) {
  const { cluster, pool, nodes } = words.example;
  const ops = CLUSTER_OPERATIONS[family];
  const ls = defineCommand({
    kind: `${family}.ls`,
    group: family,
    usage: `/gpu ${family} ls [--page N]`,
    summary: `list ${words.title} clusters`,
    example: `/gpu ${family} ls`,
    schema: paged(`${family}.ls`),
    parse: pagedNoArgs(`${family}.ls`),
    delivery: 'ephemeral',
    operationClass: 'read',
    needs: [ops.listClusters],
  });
  const show = defineCommand({
    kind: `${family}.show`,
    group: family,
    usage: `/gpu ${family} show <cluster>`,
    summary: words.show.summary,
    example: `/gpu ${family} show ${cluster}`,
    schema: onCluster(`${family}.show`),
    parse: (r) => ({ kind: `${family}.show`, cluster: r.onlyName(CLUSTER_ARG) }),
    delivery: 'ephemeral',
    operationClass: 'read',
    needs: words.show.needs,
    refers: (c) => clusterRefers(family, c.cluster),
    needsFor: (c) => clusterNeed(family, c.cluster),
  });
  const rm = defineCommand({
    kind: `${family}.rm`,
    group: family,
    usage: `/gpu ${family} rm <cluster>`,
    summary: 'delete a cluster',
    example: `/gpu ${family} rm ${cluster}`,
    schema: onCluster(`${family}.rm`),
    parse: (r) => ({ kind: `${family}.rm`, cluster: r.onlyName(CLUSTER_ARG) }),
    delivery: 'channel',
    operationClass: 'destroy',
    needs: [ops.deleteCluster],
    refers: (c) => clusterRefers(family, c.cluster),
    needsFor: (c) => clusterNeed(family, c.cluster),
  });
  const pools = defineCommand({
    kind: `${family}.pools`,
    group: family,
    usage: `/gpu ${family} pools <cluster> [--page N]`,
    summary: 'list the node pools of a cluster',
    example: `/gpu ${family} pools ${cluster}`,
    schema: onClusterPaged(`${family}.pools`),
    parse: pagedCluster(`${family}.pools`),
    delivery: 'ephemeral',
    operationClass: 'read',
    needs: [ops.listPools],
    refers: (c) => clusterRefers(family, c.cluster),
    needsFor: (c) => clusterNeed(family, c.cluster),
  });
  const poolAdd = defineCommand({
    kind: `${family}.pool.add`,
    group: family,
    usage: `/gpu ${family} pool add <cluster> [<name> <type> <count>]`,
    summary: 'add a node pool; with only the cluster a form',
    example: `/gpu ${family} pool add ${cluster} ${pool} ${nodes}`,
    schema: poolAddSchema(`${family}.pool.add`),
    parse: (r) => parsePoolAdd(r, `${family}.pool.add`),
    delivery: 'channel',
    operationClass: 'create',
    needs: [ops.createPool],
    creates: { what: 'node pools', list: ops.listPools, remove: ops.deletePool },
    // count × type running: the type is checked against the price list as create's is, and priced.
    effects: (c) =>
      c.modal ? {} : { launches: { type: c.type, count: c.count }, costLasts: 'while the pool runs' },
    refers: (c) => clusterRefers(family, c.cluster),
    needsFor: (c) => clusterNeed(family, c.cluster),
    form: { spec: words.poolForm, prefill: (c) => ({ cluster: c.cluster }) },
  });
  const poolRm = defineCommand({
    kind: `${family}.pool.rm`,
    group: family,
    usage: `/gpu ${family} pool rm <cluster> <pool>`,
    summary: 'delete a node pool',
    example: `/gpu ${family} pool rm ${cluster} ${pool}`,
    schema: poolRmSchema(`${family}.pool.rm`),
    parse: (r) => parsePoolRm(r, `${family}.pool.rm`),
    delivery: 'channel',
    operationClass: 'destroy',
    needs: [ops.deletePool],
    refers: (c) => clusterRefers(family, c.cluster),
    needsFor: (c) => poolRmNeeds(family, c),
  });
  return { ls, show, rm, pools, poolAdd, poolRm };
}
