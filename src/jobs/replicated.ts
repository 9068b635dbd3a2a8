import type { Cluster, Redis } from 'ioredis';
import { QUEUE_PREFIX } from './queue.js';

// What an acknowledgement guarantees on a replicated Redis (Sentinel, Cluster): the job is on the
// primary and on at least `replicas` replicas. Replication is asynchronous, so after adding a job the
// listener sends WAIT on the queue's connection (BullMQ writes through the instance it is given),
// which returns once that many replicas have every write made on it so far, or after the timeout.
// On a Cluster WAIT is per shard: it goes to the connection of the primary that holds the queue's
// slot (the `{gpuops}` hash tag), the one the job was written through. Fewer than asked means the
// job could die with the primary: the request is then taken back and the person told to send it again.

export class NotReplicatedError extends Error {
  constructor(acked: number, wanted: number) {
    super(`the job reached ${acked} of ${wanted} Redis replica(s) in time`);
    this.name = 'NotReplicatedError';
  }
}

/** A check to run after each enqueue, or undefined when no replica is asked for. */
export function replicationCheck(
  queueConnection: Redis,
  replicas: number,
  timeoutMs: number,
): (() => Promise<void>) | undefined {
  if (replicas <= 0) return undefined;
  return async () => {
    const node = queueConnection.isCluster
      ? await queuePrimary(queueConnection as unknown as Cluster)
      : queueConnection;
    const acked = node ? Number(await node.wait(replicas, timeoutMs)) : 0;
    if (acked < replicas) throw new NotReplicatedError(acked, replicas);
  };
}

/**
 * Degraded mode: why no change can be stored now, or undefined. Reads the queue primary's replication
 * (INFO replication: replicas whose link is online) at most once a second, so the listener can refuse a
 * change in one sentence before storing anything, answer lookups (their jobs need no second copy), and
 * /readyz can say which mode gpuops is in. Unknown (Redis not answering) reads as not degraded: the
 * WAIT after each add still decides.
 */
export function replicaShortage(
  queueConnection: Redis,
  replicas: number,
  cacheMs = 1_000,
): (() => Promise<string | undefined>) | undefined {
  if (replicas <= 0) return undefined;
  let last: { at: number; answer: Promise<string | undefined> } | undefined;
  const read = async (): Promise<string | undefined> => {
    const node = queueConnection.isCluster
      ? await queuePrimary(queueConnection as unknown as Cluster)
      : queueConnection;
    if (!node) return undefined;
    const info = await node.info('replication');
    const online = info.split(/\r?\n/).filter((l) => /^slave\d+:.*state=online/.test(l)).length;
    if (online >= replicas) return undefined;
    return `Redis has ${online} of the ${replicas} replica(s) gpuops needs to keep a second copy of each job`;
  };
  return () => {
    const now = Date.now();
    if (!last || now - last.at >= cacheMs) {
      last = { at: now, answer: read().catch(() => undefined) };
    }
    return last.answer;
  };
}

/** What a person is told when a change is refused in degraded mode (`why` from replicaShortage). */
export function degradedRefusal(why: string): string {
  return `:warning: gpuops takes no changes right now: ${why}, so a job stored now could be lost; nothing was started. Lookups still work; try again in a few minutes.`;
}

let queueSlot: number | undefined;

/** The cluster's connection to the primary that holds the queue's slot now, if it knows one. */
async function queuePrimary(cluster: Cluster): Promise<Redis | undefined> {
  queueSlot ??= Number(await cluster.call('CLUSTER', 'KEYSLOT', QUEUE_PREFIX));
  const key = cluster.slots[queueSlot]?.[0];
  return cluster.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === key);
}

/**
 * Redis failed after the job was added and before it was known to be on a replica, and taking it back
 * failed too: it may still run (if it reached the replica that is primary now) or not.
 */
export class MaybeQueuedError extends Error {
  readonly jobId: string;
  constructor(jobId: string, cause: unknown) {
    super(`job ${jobId} may or may not have been stored`, { cause });
    this.name = 'MaybeQueuedError';
    this.jobId = jobId;
  }
}
