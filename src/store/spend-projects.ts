import type { ChainableCommander } from 'ioredis';
import type { Store } from './store.js';
import { watchKey } from './watch-keys.js';
import { watchedProjectsKey } from './watch-snapshots.js';

// The projects whose spend is counted whether or not a channel watches them: every project gpuops has
// run a job in. Such a project is also in the set the state watcher looks at (watchedProjectsKey), and
// stays there when its last channel stops watching, so its ledger goes on without a gap
// (docs/budgets.md).

export const countedProjectsKey = (prefix: string) => watchKey(prefix, 'spend', 'projects');

/** Counts a project's spend from now on (idempotent: two set additions). */
export async function countSpendOf(store: Pick<Store, 'redis' | 'prefix'>, projectId: string): Promise<void> {
  await countSpendIn(store.redis.multi(), store.prefix, projectId).exec();
}

/** countSpendOf's two additions, queued on `tx` (a MULTI the caller sends with more). */
export function countSpendIn(tx: ChainableCommander, prefix: string, projectId: string): ChainableCommander {
  return tx.sadd(countedProjectsKey(prefix), projectId).sadd(watchedProjectsKey(prefix), projectId);
}

export async function isSpendCounted(
  store: Pick<Store, 'redis' | 'prefix'>,
  projectId: string,
): Promise<boolean> {
  return (await store.redis.sismember(countedProjectsKey(store.prefix), projectId)) === 1;
}

/** Every project whose spend is counted, sorted. */
export async function countedProjects(store: Pick<Store, 'redis' | 'prefix'>): Promise<string[]> {
  return (await store.redis.smembers(countedProjectsKey(store.prefix))).sort();
}
