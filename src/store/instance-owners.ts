import type { Store } from './store.js';

// Who made an instance through gpuops: the Slack user of the create job. The idle watcher tells this
// person in a direct message; instances made elsewhere have no owner here and are reported to the
// watching channel only.

const OWNER_TTL_SECONDS = 180 * 86_400;

const ownerKey = (prefix: string, instanceId: string) => `${prefix}:instance:${instanceId}:owner`;

export async function recordInstanceOwner(
  store: Pick<Store, 'redis' | 'prefix'>,
  instanceId: string,
  userId: string,
): Promise<void> {
  await store.redis.set(ownerKey(store.prefix, instanceId), userId, 'EX', OWNER_TTL_SECONDS);
}

export async function instanceOwner(
  store: Pick<Store, 'redis' | 'prefix'>,
  instanceId: string,
): Promise<string | undefined> {
  return (await store.redis.get(ownerKey(store.prefix, instanceId))) ?? undefined;
}
