import type { Redis } from 'ioredis';
import type { Config } from '../config.js';
import { replicaShortage, replicationCheck } from '../jobs/replicated.js';

// What an acknowledgement guarantees on a replicated Redis, for every part that queues a job (the
// listener, the sweeper in the workers) and for /readyz: the WAIT after each add, and degraded mode.

/** How many replicas each job must reach: REDIS_WAIT_REPLICAS, else 1 with Sentinel or Cluster, else 0. */
export function replicasWanted(config: Config): number {
  return config.REDIS_WAIT_REPLICAS ?? (config.REDIS_SENTINELS || config.REDIS_CLUSTER_NODES ? 1 : 0);
}

export function replicationGuards(queueRedis: Redis, config: Config) {
  const wanted = replicasWanted(config);
  return {
    /** After each add: resolves once the job is on enough replicas (src/jobs/replicated.ts). */
    replicated: replicationCheck(queueRedis, wanted, config.REDIS_WAIT_MS),
    /** Degraded mode: why no change can be stored now, else undefined. */
    degraded: replicaShortage(queueRedis, wanted),
  };
}
