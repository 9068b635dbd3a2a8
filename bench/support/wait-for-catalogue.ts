import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { readCatalog } from '../../src/store/catalog-cache.js';
import { createStore } from '../../src/store/store.js';

/**
 * Waits until a freshly started gpuops has cached the price list of the project (its first
 * `catalog.refresh` job): before that, a create or start has no price and waits for an approver
 * (docs/policy.md), which is not what a benchmark or a load test means to measure.
 */
export async function waitForCatalogue(
  redisUrl: string,
  projectId: string,
  options: { prefix?: string; timeoutMs?: number } = {},
): Promise<void> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  const store = createStore(redis, options.prefix);
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  try {
    for (;;) {
      const entry = await readCatalog(store, projectId);
      if (entry?.catalog.configurations) return;
      if (Date.now() > deadline) throw new Error('gpuops did not cache the price list in time');
      await sleep(50);
    }
  } finally {
    redis.disconnect();
  }
}
