import type { Store } from './store.js';

// Who made an instance through gpuops: the Slack user of the create job. The idle watcher tells this
// person in a direct message; instances made elsewhere have no owner here and are reported to the
// watching channel only. Each person's machines are also listed by person (name, project, the channel
// it was made in), for their Home tab (docs/home.md).

const OWNER_TTL_SECONDS = 180 * 86_400;

const ownerKey = (prefix: string, instanceId: string) => `${prefix}:instance:${instanceId}:owner`;
const ownedKey = (prefix: string, userId: string) => `${prefix}:user:${userId}:instances`;

/** Where a machine was made: what its owner's Home tab needs to show it and act on it. */
export interface OwnedInstance {
  readonly id: string;
  readonly name: string;
  readonly channelId: string;
  readonly projectId?: string | undefined;
  /** Its type and state as the create job last saw them from the cloud. */
  readonly type?: string | undefined;
  readonly state?: string | undefined;
  /**
   * When the create job wrote this (epoch ms): a listing of its project older than this cannot say
   * it is gone (it may predate the machine). Absent in records of older versions.
   */
  readonly recordedAt?: number | undefined;
}

export async function recordInstanceOwner(
  store: Pick<Store, 'redis' | 'prefix'>,
  instanceId: string,
  userId: string,
  made?: Omit<OwnedInstance, 'id'>,
): Promise<void> {
  const tx = store.redis.multi().set(ownerKey(store.prefix, instanceId), userId, 'EX', OWNER_TTL_SECONDS);
  if (made) {
    const owned = ownedKey(store.prefix, userId);
    tx.hset(owned, instanceId, JSON.stringify({ ...made, id: instanceId })).expire(owned, OWNER_TTL_SECONDS);
  }
  await tx.exec();
}

/** The machines `userId` made through gpuops, as recorded when each was made (deleted ones too). */
export async function instancesOwnedBy(
  store: Pick<Store, 'redis' | 'prefix'>,
  userId: string,
): Promise<OwnedInstance[]> {
  const raw = await store.redis.hgetall(ownedKey(store.prefix, userId));
  return Object.values(raw).flatMap((json) => {
    try {
      const v = JSON.parse(json) as OwnedInstance;
      return typeof v.id === 'string' && typeof v.name === 'string' && typeof v.channelId === 'string'
        ? [v]
        : [];
    } catch {
      return [];
    }
  });
}

/** Forgets a machine of `userId` that is gone. */
export async function forgetOwnedInstance(
  store: Pick<Store, 'redis' | 'prefix'>,
  userId: string,
  instanceId: string,
): Promise<void> {
  await store.redis.hdel(ownedKey(store.prefix, userId), instanceId);
}

/** The owners of several instances at once (undefined where none is recorded). */
export async function instanceOwners(
  store: Pick<Store, 'redis' | 'prefix'>,
  instanceIds: readonly string[],
): Promise<(string | undefined)[]> {
  if (instanceIds.length === 0) return [];
  const owners = await store.redis.mget(instanceIds.map((id) => ownerKey(store.prefix, id)));
  return owners.map((o) => o ?? undefined);
}

export async function instanceOwner(
  store: Pick<Store, 'redis' | 'prefix'>,
  instanceId: string,
): Promise<string | undefined> {
  return (await store.redis.get(ownerKey(store.prefix, instanceId))) ?? undefined;
}
