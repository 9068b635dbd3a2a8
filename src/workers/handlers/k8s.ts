import {
  CloudConflictError,
  CloudNotFoundError,
  type KubernetesCluster,
  type KubernetesNodePool,
} from '../../cloud/index.js';
import type { CommandOf } from '../../command/command-schema.js';
import {
  k8sClusterBlocks,
  k8sClusterLine,
  k8sPoolLine,
  k8sPoolReadiness,
  k8sStatus,
} from '../../render/clusters.js';
import { listBlocks } from '../../render/instances.js';
import { PermanentJobError } from '../job-errors.js';
import type { JobRun, Outcome } from '../job-run.js';
import { resolveRef } from '../resolve.js';
import { waitFor } from '../wait-for.js';
import { pickPool } from './pick-pool.js';
import { withArguments } from './with-arguments.js';

// `/gpu k8s …` except kubeconfig and register. "Ready" per shape: A reports status.type and a cluster
// is ready at READY; B and C report no status, so a cluster is ready once it can be read. A node pool
// is ready when `count` of its nodes are Ready where the shape lists nodes (A, B); C lists none, so
// there a pool is ready once it can be read.

const WHAT = 'Kubernetes cluster';

const sameVersion = (a: string, b: string) => a.replace(/^v/i, '') === b.replace(/^v/i, '');
const byName = <T extends { name: string }>(a: T, b: T) => a.name.localeCompare(b.name);

function clusterReady(c: KubernetesCluster): boolean {
  const status = k8sStatus(c);
  return status === undefined || status.toUpperCase() === 'READY';
}

function clusterFailed(c: KubernetesCluster): boolean {
  return /ERROR|FAIL/i.test(k8sStatus(c) ?? '');
}

function resolveCluster(run: JobRun, ref: string): Promise<KubernetesCluster> {
  const { cloud } = run.deps;
  return resolveRef(
    ref,
    WHAT,
    () => cloud.listK8sClusters(run.call),
    cloud.supports('getK8sCluster') ? (id) => cloud.getK8sCluster({ id }, run.call) : undefined,
  );
}

async function readCluster(run: JobRun, id: string): Promise<KubernetesCluster | undefined> {
  try {
    return await run.deps.cloud.getK8sCluster({ id }, run.call);
  } catch (err) {
    if (err instanceof CloudNotFoundError) return undefined;
    throw err;
  }
}

async function readPool(run: JobRun, clusterId: string, poolId: string) {
  try {
    return await run.deps.cloud.getK8sNodePool({ clusterId, poolId }, run.call);
  } catch (err) {
    if (err instanceof CloudNotFoundError) return undefined;
    throw err;
  }
}

/** The cluster's pools; a flat listing (shape C) that ignores the filter is narrowed by cluster name. */
async function poolsOf(
  run: JobRun,
  cluster: { readonly id: string; readonly name: string },
): Promise<KubernetesNodePool[]> {
  const pools = await run.deps.cloud.listK8sNodePools({ clusterId: cluster.id }, run.call);
  return pools.filter((p) => p.cluster === cluster.name || p.cluster === cluster.id).sort(byName);
}

/** Polls a cluster until `done`; an error status or its disappearance ends the job. */
async function waitForCluster(
  run: JobRun,
  id: string,
  name: string,
  goal: string,
  done: (c: KubernetesCluster) => boolean,
): Promise<KubernetesCluster> {
  const settled = await waitFor(run, {
    read: () => readCluster(run, id),
    done: (c) => c !== undefined && done(c),
    failed: (c) =>
      c === undefined
        ? `${name} disappeared while waiting for it to be ${goal}.`
        : clusterFailed(c)
          ? `${name} went to status ${k8sStatus(c)} instead of ${goal}; see it with /gpu k8s show ${name}.`
          : null,
    describe: (c) => `status: ${c ? (k8sStatus(c) ?? 'readable') : 'gone'}`,
    goal: `${name} to be ${goal}`,
  });
  return settled!;
}

export async function listK8sClusters(run: JobRun): Promise<Outcome> {
  const clusters = (await run.deps.cloud.listK8sClusters(run.call)).sort(byName);
  const { text, blocks } = listBlocks(
    `Kubernetes clusters (${clusters.length})`,
    clusters.map(k8sClusterLine),
  );
  return { detail: text, result: blocks };
}

export async function showK8sCluster(run: JobRun, command: CommandOf<'k8s.show'>): Promise<Outcome> {
  const cluster = await resolveCluster(run, command.cluster);
  const pools = run.deps.cloud.supports('listK8sNodePools') ? await poolsOf(run, cluster) : undefined;
  const status = k8sStatus(cluster);
  return {
    detail: `${cluster.name}: Kubernetes ${cluster.version}${status ? `, ${status}` : ''}`,
    result: k8sClusterBlocks(cluster, pools),
  };
}

type CreateProgress = {
  clusterId: string;
  sent: boolean;
};

function taken(name: string, version?: string): PermanentJobError {
  return new PermanentJobError(
    `A Kubernetes cluster named ${name} already exists in this project${version ? ` (${version})` : ''}; pick another name, or see it with /gpu k8s show ${name}.`,
  );
}

/**
 * Idempotent by name: cluster names are unique in a project, so a retry that finds one of its name
 * after recording that it sent the create adopts it; one found before sending is someone else's.
 */
export async function createK8sCluster(run: JobRun, request: CommandOf<'k8s.create'>): Promise<Outcome> {
  const command = withArguments(request);
  const { cloud } = run.deps;
  let clusterId = run.progress<CreateProgress>().clusterId;
  if (!clusterId) {
    const existing = (await cloud.listK8sClusters(run.call)).find((c) => c.name === command.name);
    if (existing && run.progress<CreateProgress>().sent === true) {
      clusterId = existing.id;
    } else if (existing) {
      throw taken(command.name, existing.version);
    } else {
      await run.update('working', `Creating Kubernetes cluster ${command.name} (${command.version})…`);
      await run.saveProgress({ sent: true });
      try {
        clusterId = (await cloud.createK8sCluster({ name: command.name, version: command.version }, run.call))
          .id;
      } catch (err) {
        if (err instanceof CloudConflictError) throw taken(command.name);
        throw err;
      }
    }
    await run.saveProgress({ clusterId });
  }
  const cluster = await waitForCluster(run, clusterId, command.name, 'ready', clusterReady);
  return {
    detail: `Kubernetes cluster ${cluster.name} is ready (${cluster.version}).`,
    result: k8sClusterBlocks(cluster),
  };
}

type TargetProgress = { id: string; name: string };

export async function deleteK8sCluster(run: JobRun, command: CommandOf<'k8s.rm'>): Promise<Outcome> {
  // A retry after the delete went through finds no cluster by name: it continues with the recorded id.
  let target = run.progress<TargetProgress>() as Partial<TargetProgress>;
  if (!target.id || !target.name) {
    const cluster = await resolveCluster(run, command.cluster);
    target = { id: cluster.id, name: cluster.name };
    await run.saveProgress(target);
  }
  const { id, name } = target as TargetProgress;
  await run.update('working', `Deleting Kubernetes cluster ${name}…`);
  try {
    await run.deps.cloud.deleteK8sCluster({ id }, run.call);
  } catch (err) {
    if (!(err instanceof CloudNotFoundError)) throw err;
  }
  await waitFor(run, {
    read: () => readCluster(run, id),
    done: (c) => c === undefined,
    describe: (c) => `status: ${c ? (k8sStatus(c) ?? 'still there') : 'gone'}`,
    goal: `${name} to be deleted`,
  });
  return { detail: `Kubernetes cluster ${name} is deleted.` };
}

export async function upgradeK8sCluster(run: JobRun, command: CommandOf<'k8s.upgrade'>): Promise<Outcome> {
  let cluster = await resolveCluster(run, command.cluster);
  const from = cluster.version;
  if (!sameVersion(from, command.version)) {
    await run.update('working', `Moving ${cluster.name} from ${from} to ${command.version}…`);
    await run.deps.cloud.updateK8sCluster({ id: cluster.id, version: command.version }, run.call);
  }
  cluster = await waitForCluster(
    run,
    cluster.id,
    cluster.name,
    `ready at ${command.version}`,
    (c) => clusterReady(c) && sameVersion(c.version, command.version),
  );
  const detail = sameVersion(from, command.version)
    ? `${cluster.name} is already at ${cluster.version}; nothing to do.`
    : `${cluster.name} is now at ${cluster.version} (was ${from}).`;
  return { detail, result: k8sClusterBlocks(cluster) };
}

export async function labelK8sCluster(run: JobRun, command: CommandOf<'k8s.label'>): Promise<Outcome> {
  const cluster = await resolveCluster(run, command.cluster);
  const keys = Object.keys(command.labels);
  await run.update('working', `Labelling ${cluster.name}…`);
  // The cloud merges the labels into the existing ones, so sending them again is harmless.
  const updated = await run.deps.cloud.updateK8sCluster(
    { id: cluster.id, labels: { ...command.labels } },
    run.call,
  );
  const total = Object.keys(updated.labels ?? {}).length;
  return {
    detail: `Set ${keys.length} label${keys.length === 1 ? '' : 's'} on ${updated.name} (${keys.join(', ')}); it has ${total} in all.`,
    result: k8sClusterBlocks(updated),
  };
}

export async function listK8sPools(run: JobRun, command: CommandOf<'k8s.pools'>): Promise<Outcome> {
  const cluster = await resolveCluster(run, command.cluster);
  const pools = await poolsOf(run, cluster);
  const { text, blocks } = listBlocks(
    `Node pools of ${cluster.name} (${pools.length})`,
    pools.map(k8sPoolLine),
  );
  return { detail: text, result: blocks };
}

type PoolProgress = {
  clusterId: string;
  clusterName: string;
  poolId: string;
  sent: boolean;
};

function poolTaken(cluster: string, pool: KubernetesNodePool | { name: string }): PermanentJobError {
  const what = 'type' in pool ? ` (${pool.count} × ${pool.type})` : '';
  return new PermanentJobError(
    `Cluster ${cluster} already has a node pool named ${pool.name}${what}; pick another name, or see them with /gpu k8s pools ${cluster}.`,
  );
}

function poolSummary(pool: KubernetesNodePool): string {
  const r = k8sPoolReadiness(pool);
  return r ? `${r.ready}/${pool.count} nodes ready` : 'this cloud does not report its nodes';
}

/** Idempotent by name within the cluster, like a cluster create; waits for `count` ready nodes. */
export async function addK8sPool(run: JobRun, request: CommandOf<'k8s.pool.add'>): Promise<Outcome> {
  const command = withArguments(request);
  const { cloud } = run.deps;
  let progress = run.progress<PoolProgress>();
  if (!progress.clusterId || !progress.clusterName) {
    const cluster = await resolveCluster(run, command.cluster);
    await run.saveProgress({ clusterId: cluster.id, clusterName: cluster.name });
    progress = run.progress<PoolProgress>();
  }
  const clusterId = progress.clusterId!;
  const clusterName = progress.clusterName!;
  let poolId = progress.poolId;
  if (!poolId) {
    const existing = (await poolsOf(run, { id: clusterId, name: clusterName })).find(
      (p) => p.name === command.name,
    );
    if (existing && progress.sent === true) {
      poolId = existing.id;
    } else if (existing) {
      throw poolTaken(clusterName, existing);
    } else {
      await run.update(
        'working',
        `Adding node pool ${command.name} (${command.count} × ${command.type}) to ${clusterName}…`,
      );
      await run.saveProgress({ sent: true });
      try {
        const created = await cloud.createK8sNodePool(
          { clusterId, clusterName, name: command.name, type: command.type, count: command.count },
          run.call,
        );
        poolId = created.id;
      } catch (err) {
        if (err instanceof CloudConflictError) throw poolTaken(clusterName, { name: command.name });
        throw err;
      }
    }
    await run.saveProgress({ poolId });
  }
  const id = poolId;
  const pool = await waitFor(run, {
    read: () => readPool(run, clusterId, id),
    done: (p) => {
      if (!p) return false;
      const r = k8sPoolReadiness(p);
      return r === undefined || r.ready >= p.count;
    },
    failed: (p) =>
      p ? null : `Node pool ${command.name} disappeared from ${clusterName} while it was starting.`,
    describe: (p) => (p ? poolSummary(p) : 'gone'),
    goal: `node pool ${command.name} of ${clusterName} to be ready`,
  });
  return {
    detail: `Node pool ${pool!.name} of ${clusterName} is ready: ${pool!.count} × ${pool!.type}, ${poolSummary(pool!)}.`,
    result: listBlocks(`Node pool of ${clusterName}`, [k8sPoolLine(pool!)]).blocks,
  };
}

type PoolRmProgress = { clusterId: string; clusterName: string; poolId: string; poolName: string };

export async function removeK8sPool(run: JobRun, command: CommandOf<'k8s.pool.rm'>): Promise<Outcome> {
  let target = run.progress<PoolRmProgress>();
  if (!target.poolId || !target.clusterId) {
    const cluster = await resolveCluster(run, command.cluster);
    const pool = pickPool(await poolsOf(run, cluster), command.pool, cluster.name);
    await run.saveProgress({
      clusterId: cluster.id,
      clusterName: cluster.name,
      poolId: pool.id,
      poolName: pool.name,
    });
    target = run.progress<PoolRmProgress>();
  }
  const { clusterId, clusterName, poolId, poolName } = target as PoolRmProgress;
  await run.update('working', `Deleting node pool ${poolName} of ${clusterName}…`);
  try {
    await run.deps.cloud.deleteK8sNodePool({ clusterId, poolId }, run.call);
  } catch (err) {
    if (!(err instanceof CloudNotFoundError)) throw err;
  }
  await waitFor(run, {
    read: () => readPool(run, clusterId, poolId),
    done: (p) => p === undefined,
    describe: (p) => (p ? 'still there' : 'gone'),
    goal: `node pool ${poolName} of ${clusterName} to be deleted`,
  });
  return { detail: `Node pool ${poolName} of ${clusterName} is deleted.` };
}
