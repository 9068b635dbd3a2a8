import { CloudConflictError, CloudNotFoundError } from '../../cloud/index.js';
import type { Readiness } from '../../render/clusters.js';
import { listBlocks } from '../../render/instances.js';
import { sendOnce, waitOutEarlierSend } from './earlier-send.js';
import { PermanentJobError } from './job-errors.js';
import type { JobRun, Outcome } from './job-run.js';
import { pickPool } from './pick-pool.js';
import { waitFor } from './wait-for.js';

// The steps the Kubernetes and Slurm handlers share: a read that takes "not found" as gone, a target
// recorded on first resolve, a create that is idempotent by name, a delete that waits for the thing to
// go, and the node-pool add and remove flows, which differ between the two families only in their calls
// and in how a node counts as ready.

interface Named {
  readonly id: string;
  readonly name: string;
}

/** What `read` returns, or undefined where the cloud answers that it is not there. */
export async function ifExists<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof CloudNotFoundError) return undefined;
    throw err;
  }
}

/**
 * The job's target as first resolved, recorded so that a retry acts on the same one even after a delete
 * made it unresolvable by name. `keys` are the fields whose presence means it was recorded.
 */
export async function recordedTarget<T extends Record<string, string>>(
  run: JobRun,
  keys: readonly (keyof T)[],
  resolve: () => Promise<T>,
): Promise<T> {
  const saved = run.progress<T>();
  if (keys.every((key) => saved[key])) return saved as T;
  const target = await resolve();
  await run.saveProgress(target);
  return target;
}

export interface CreateOnce<T> {
  /** The progress field the new id is recorded under. */
  readonly idKey: string;
  /** The one of the requested name already there, if any. */
  readonly find: () => Promise<T | undefined>;
  /** The refusal for a name someone else holds; `existing` when it was found rather than met as a conflict. */
  readonly taken: (existing?: T) => PermanentJobError;
  /** What the message says while the create is sent. */
  readonly working: string;
  readonly create: () => Promise<{ readonly id: string }>;
}

/**
 * Creates at most once, idempotent by name: names are unique where they live, so a retry that finds one
 * of its name after recording that it sent the create adopts it; one found before sending is someone
 * else's. Returns the id, recorded under `idKey`.
 */
export async function createOnce<T extends { readonly id: string }>(
  run: JobRun,
  o: CreateOnce<T>,
): Promise<string> {
  const progress = run.progress<Record<string, unknown>>();
  const recorded = progress[o.idKey];
  if (typeof recorded === 'string' && recorded !== '') return recorded;
  let existing = await o.find();
  // An earlier attempt's create may still be held by the cloud: wait it out before sending another.
  if (!existing && (await waitOutEarlierSend(run, run.deps.cloud.timeoutMs))) existing = await o.find();
  let id: string;
  if (existing && progress.sent === true) {
    id = existing.id;
  } else if (existing) {
    throw o.taken(existing);
  } else {
    await run.update('working', o.working);
    try {
      id = (await sendOnce(run, () => o.create())).id;
    } catch (err) {
      if (err instanceof CloudConflictError) throw o.taken();
      throw err;
    }
  }
  await run.saveProgress({ [o.idKey]: id });
  return id;
}

export interface DeleteThenWait<T> {
  /** What the message says while the delete is sent. */
  readonly working: string;
  readonly remove: () => Promise<unknown>;
  readonly read: () => Promise<T | undefined>;
  /** The waiting line; "still there" or "gone" unless given. */
  readonly describe?: (value: T | undefined) => string;
  readonly goal: string;
}

/** Sends a delete (one already gone counts as sent) and waits until `read` finds nothing. */
export async function deleteThenWait<T>(run: JobRun, o: DeleteThenWait<T>): Promise<void> {
  await run.update('working', o.working);
  try {
    await o.remove();
  } catch (err) {
    if (!(err instanceof CloudNotFoundError)) throw err;
  }
  await waitFor(run, {
    read: o.read,
    done: (value) => value === undefined,
    describe: o.describe ?? ((value) => (value ? 'still there' : 'gone')),
    goal: o.goal,
  });
}

// ─── Node pools ──────────────────────────────────────────────────────────────────────────────────

interface NodePool extends Named {
  readonly type: string;
  /** Absent where the shape does not report it (Slurm C): the requested count stands in. */
  readonly count?: number | undefined;
}

interface PoolRequest {
  readonly name: string;
  readonly type: string;
  readonly count: number;
}

/** What the pool flows need from a cluster family. */
export interface PoolFamily<P extends NodePool> {
  /** The subcommand, for the hints in messages (`/gpu k8s pools …`). */
  readonly command: 'k8s' | 'slurm';
  /** How the waiting line calls a node that counts: "ready" or "up". */
  readonly nodesAre: string;
  readonly resolveCluster: (run: JobRun, ref: string) => Promise<Named>;
  /** The cluster's pools, by name. */
  readonly pools: (run: JobRun, cluster: Named) => Promise<P[]>;
  readonly read: (run: JobRun, clusterId: string, poolId: string) => Promise<P | undefined>;
  readonly create: (run: JobRun, cluster: Named, pool: PoolRequest) => Promise<{ readonly id: string }>;
  readonly remove: (run: JobRun, clusterId: string, poolId: string) => Promise<unknown>;
  /** Undefined where the shape lists no nodes: such a pool is ready once it can be read. */
  readonly readiness: (pool: P) => Readiness | undefined;
  readonly line: (pool: P) => string;
}

function poolTaken(
  command: PoolFamily<NodePool>['command'],
  cluster: string,
  name: string,
  existing?: NodePool,
): PermanentJobError {
  const what = existing?.count !== undefined ? ` (${existing.count} × ${existing.type})` : '';
  return new PermanentJobError(
    `Cluster ${cluster} already has a node pool named ${name}${what}; pick another name, or see them with /gpu ${command} pools ${cluster}.`,
  );
}

/** Idempotent by name within the cluster, like a cluster create; waits for `count` nodes that count. */
export async function addPool<P extends NodePool>(
  run: JobRun,
  command: PoolRequest & { readonly cluster: string },
  family: PoolFamily<P>,
): Promise<Outcome> {
  const { name, type, count } = command;
  const { clusterId, clusterName } = await recordedTarget(run, ['clusterId', 'clusterName'], async () => {
    const cluster = await family.resolveCluster(run, command.cluster);
    return { clusterId: cluster.id, clusterName: cluster.name };
  });
  const cluster = { id: clusterId, name: clusterName };
  const poolId = await createOnce(run, {
    idKey: 'poolId',
    find: async () => (await family.pools(run, cluster)).find((p) => p.name === name),
    taken: (existing) => poolTaken(family.command, clusterName, name, existing),
    working: `Adding node pool ${name} (${count} × ${type}) to ${clusterName}…`,
    create: () => family.create(run, cluster, { name, type, count }),
  });
  const summary = (p: P) => {
    const r = family.readiness(p);
    return r
      ? `${r.ready}/${p.count ?? r.total} nodes ${family.nodesAre}`
      : 'this cloud does not report its nodes';
  };
  const pool = await waitFor(run, {
    read: () => family.read(run, clusterId, poolId),
    done: (p) => {
      if (!p) return false;
      const r = family.readiness(p);
      return r === undefined || r.ready >= (p.count ?? count);
    },
    failed: (p) => (p ? null : `Node pool ${name} disappeared from ${clusterName} while it was starting.`),
    describe: (p) => (p ? summary(p) : 'gone'),
    goal: `node pool ${name} of ${clusterName} to be ready`,
  });
  return {
    detail: `Node pool ${pool!.name} of ${clusterName} is ready: ${pool!.count ?? count} × ${pool!.type}, ${summary(pool!)}.`,
    result: listBlocks(`Node pool of ${clusterName}`, [family.line(pool!)]).blocks,
  };
}

/** Deletes a node pool of a cluster, by id or name, and waits until it is gone. */
export async function removePool<P extends NodePool>(
  run: JobRun,
  command: { readonly cluster: string; readonly pool: string },
  family: PoolFamily<P>,
): Promise<Outcome> {
  const { clusterId, clusterName, poolId, poolName } = await recordedTarget(
    run,
    ['clusterId', 'poolId'],
    async () => {
      const cluster = await family.resolveCluster(run, command.cluster);
      const pool = pickPool(await family.pools(run, cluster), command.pool, cluster.name, family.command);
      return { clusterId: cluster.id, clusterName: cluster.name, poolId: pool.id, poolName: pool.name };
    },
  );
  await deleteThenWait(run, {
    working: `Deleting node pool ${poolName} of ${clusterName}…`,
    remove: () => family.remove(run, clusterId, poolId),
    read: () => family.read(run, clusterId, poolId),
    goal: `node pool ${poolName} of ${clusterName} to be deleted`,
  });
  return { detail: `Node pool ${poolName} of ${clusterName} is deleted.` };
}
