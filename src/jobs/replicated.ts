import type { Redis } from 'ioredis';

// What an acknowledgement guarantees on a replicated Redis (Sentinel): the job is on the primary and
// on at least `replicas` replicas. Replication is asynchronous, so after adding a job the listener
// sends WAIT on the queue's connection (BullMQ writes through the instance it is given), which returns once that many replicas have every write made on
// it so far, or after the timeout. Fewer than asked means the job could die with the primary: the
// request is then taken back and the person told to send it again.

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
    const acked = Number(await queueConnection.wait(replicas, timeoutMs));
    if (acked < replicas) throw new NotReplicatedError(acked, replicas);
  };
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
