import { CloudConflictError, type KubernetesCluster, type KubernetesNodePool } from '../../cloud/index.js';
import {
  k8sClusterBlocks,
  k8sClusterLine,
  k8sPoolLine,
  k8sPoolReadiness,
  k8sStatus,
} from '../../render/clusters.js';
import { escapeText } from '../../render/job-message.js';
import {
  addPool,
  createOnce,
  deleteThenWait,
  ifExists,
  type PoolFamily,
  recordedTarget,
  removePool,
} from '../kit/cluster-ops.js';
import { sendOnce, waitOutEarlierSend } from '../kit/earlier-send.js';
import type { Handlers } from '../kit/handler.js';
import { PermanentJobError } from '../kit/job-errors.js';
import type { JobRun, Outcome } from '../kit/job-run.js';
import { pagedList } from '../kit/paged-list.js';
import { resolveRef } from '../kit/resolve.js';
import { sealedInput } from '../kit/sealed-input.js';
import { waitFor } from '../kit/wait-for.js';
import { withArguments } from '../kit/with-arguments.js';
import type { CommandOf } from '../registry.js';

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

function readCluster(run: JobRun, id: string): Promise<KubernetesCluster | undefined> {
  return ifExists(() => run.deps.cloud.getK8sCluster({ id }, run.call));
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
  const { text, blocks } = pagedList(
    run.data.command,
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
  const clusterId = await createOnce(run, {
    idKey: 'clusterId',
    find: async () => (await cloud.listK8sClusters(run.call)).find((c) => c.name === command.name),
    taken: (existing) => taken(command.name, existing?.version),
    working: `Creating Kubernetes cluster ${command.name} (${command.version})…`,
    create: () => cloud.createK8sCluster({ name: command.name, version: command.version }, run.call),
  });
  const cluster = await waitForCluster(run, clusterId, command.name, 'ready', clusterReady);
  return {
    detail: `Kubernetes cluster ${cluster.name} is ready (${cluster.version}).`,
    result: k8sClusterBlocks(cluster),
  };
}

export async function deleteK8sCluster(run: JobRun, command: CommandOf<'k8s.rm'>): Promise<Outcome> {
  // A retry after the delete went through finds no cluster by name: it continues with the recorded id.
  const { id, name } = await recordedTarget(run, ['id', 'name'], async () => {
    const cluster = await resolveCluster(run, command.cluster);
    return { id: cluster.id, name: cluster.name };
  });
  await deleteThenWait(run, {
    working: `Deleting Kubernetes cluster ${name}…`,
    remove: () => run.deps.cloud.deleteK8sCluster({ id }, run.call),
    read: () => readCluster(run, id),
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
  const { text, blocks } = pagedList(
    command,
    `Node pools of ${cluster.name} (${pools.length})`,
    pools.map(k8sPoolLine),
  );
  return { detail: text, result: blocks };
}

const nodePools: PoolFamily<KubernetesNodePool> = {
  command: 'k8s',
  nodesAre: 'ready',
  resolveCluster,
  pools: poolsOf,
  read: (run, clusterId, poolId) =>
    ifExists(() => run.deps.cloud.getK8sNodePool({ clusterId, poolId }, run.call)),
  create: (run, cluster, pool) =>
    run.deps.cloud.createK8sNodePool({ clusterId: cluster.id, clusterName: cluster.name, ...pool }, run.call),
  remove: (run, clusterId, poolId) => run.deps.cloud.deleteK8sNodePool({ clusterId, poolId }, run.call),
  readiness: k8sPoolReadiness,
  line: k8sPoolLine,
};

/** Idempotent by name within the cluster, like a cluster create; waits for `count` ready nodes. */
export async function addK8sPool(run: JobRun, request: CommandOf<'k8s.pool.add'>): Promise<Outcome> {
  return addPool(run, withArguments(request), nodePools);
}

export async function removeK8sPool(run: JobRun, command: CommandOf<'k8s.pool.rm'>): Promise<Outcome> {
  return removePool(run, command, nodePools);
}

// `/gpu k8s register` (shape A): registers an existing cluster from the kubeconfig typed into the form.
// The kubeconfig reaches this handler sealed (src/store/sealed.ts) and goes to the cloud alone: never
// into the job's data, progress, messages or logs. Idempotent by name like every create: a retry after
// the request went out adopts the one cluster of that name instead of registering it twice.

type RegisterProgress = { clusterId: string; sent: boolean };

function registeredAlready(name: string): PermanentJobError {
  return new PermanentJobError(
    `A Kubernetes cluster named ${name} already exists in this project; register this one under another name.`,
  );
}

export async function registerK8sCluster(run: JobRun, request: CommandOf<'k8s.register'>): Promise<Outcome> {
  const command = withArguments(request);
  const { cloud } = run.deps;
  let clusterId = run.progress<RegisterProgress>().clusterId;
  let cluster: KubernetesCluster | undefined;
  if (!clusterId) {
    const named = async () => (await cloud.listK8sClusters(run.call)).filter((c) => c.name === command.name);
    let existing = await named();
    // An earlier attempt's registration may still be held by the cloud: wait it out before another.
    if (existing.length === 0 && (await waitOutEarlierSend(run, cloud.timeoutMs))) existing = await named();
    if (existing.length === 1 && run.progress<RegisterProgress>().sent === true) {
      cluster = existing[0]!;
    } else if (existing.length > 0) {
      throw registeredAlready(command.name);
    } else {
      const kubeconfig = await sealedInput(run, 'kubeconfig');
      if (kubeconfig === undefined) {
        throw new PermanentJobError(
          'This request carries no kubeconfig; open the form with `/gpu k8s register` and paste it there.',
        );
      }
      await run.update('working', `Registering Kubernetes cluster ${command.name}…`);
      try {
        cluster = await sendOnce(run, () =>
          cloud.registerK8sCluster(
            {
              name: command.name,
              kubeconfig,
              ...(Object.keys(command.labels).length > 0 ? { labels: command.labels } : {}),
            },
            run.call,
          ),
        );
      } catch (err) {
        if (err instanceof CloudConflictError) throw registeredAlready(command.name);
        throw err;
      }
    }
    clusterId = cluster.id;
    await run.saveProgress({ clusterId });
  }
  cluster ??= await cloud.getK8sCluster({ id: clusterId }, run.call);
  const status = cluster.status?.type;
  return {
    detail: `Kubernetes cluster ${cluster.name} is registered${status ? ` (${status})` : ''}.`,
    result: k8sClusterBlocks(cluster),
  };
}

// `/gpu k8s kubeconfig <cluster>`: the kubeconfig goes to the requester alone, as a file in a direct
// message. It is read as late as possible and lives only in one local variable: never in job data,
// progress, the outcome, a log line or a channel.

type SentProgress = { sentFile: string; clusterName: string };

/** `kubeconfig-prod.yaml`: the cluster name made safe for a file name. */
export function kubeconfigFileName(cluster: string): string {
  const safe = cluster
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80);
  return `kubeconfig-${safe || 'cluster'}.yaml`;
}

export async function sendKubeconfig(run: JobRun, command: CommandOf<'k8s.kubeconfig'>): Promise<Outcome> {
  const { cloud, slack } = run.deps;
  const done = run.progress<SentProgress>();
  if (done.sentFile) return sentOutcome(done.clusterName ?? command.cluster, done.sentFile);
  const cluster = await resolveRef(
    command.cluster,
    'Kubernetes cluster',
    () => cloud.listK8sClusters(run.call),
    cloud.supports('getK8sCluster') ? (id) => cloud.getK8sCluster({ id }, run.call) : undefined,
  );
  const dm = await slack.conversations.open({ users: run.data.ctx.userId });
  const channel = dm.channel?.id;
  if (!channel) throw new Error('Slack opened no direct message channel');
  const fileName = kubeconfigFileName(cluster.name);
  const kubeconfig = await cloud.getKubeconfig({ clusterId: cluster.id }, run.call);
  await slack.files.uploadV2({
    channel_id: channel,
    file: Buffer.from(kubeconfig, 'utf8'),
    filename: fileName,
    title: `kubeconfig for ${cluster.name}`,
    initial_comment: `The kubeconfig of Kubernetes cluster *${escapeText(cluster.name)}*, as you asked. It grants access to the cluster: keep it to yourself (\`chmod 600 ${fileName}\`) and never paste it in a channel.`,
  });
  await run.saveProgress({ sentFile: fileName, clusterName: cluster.name });
  return sentOutcome(cluster.name, fileName);
}

function sentOutcome(cluster: string, fileName: string): Outcome {
  return {
    detail: `Sent you the kubeconfig of ${cluster} in a direct message, as the file ${fileName}. Use it with: KUBECONFIG=${fileName} kubectl get nodes`,
  };
}

export const handlers = {
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
  'k8s.kubeconfig': sendKubeconfig,
} satisfies Handlers;
