import type { Store } from './store.js';

// What the Home tab keeps between publishes (docs/home.md):
//   <prefix>:home:opened:<user>      the person's app DM channel, set when they open the Home tab;
//                                    only their Home is re-published when their machines change
//   <prefix>:home:chart:<user>       JSON {key, fileId}: the spend chart last uploaded, re-used while
//                                    its data is the same
//   <prefix>:instance:<id>:running   epoch ms the watcher first saw the machine running this time

const OPENED_TTL_SECONDS = 30 * 86_400;
const CHART_TTL_SECONDS = 8 * 86_400;
const RUNNING_TTL_SECONDS = 90 * 86_400;

type Keyed = Pick<Store, 'redis' | 'prefix'>;

const openedKey = (s: Keyed, userId: string) => `${s.prefix}:home:opened:${userId}`;
const chartKey = (s: Keyed, userId: string) => `${s.prefix}:home:chart:${userId}`;
const runningKey = (s: Keyed, instanceId: string) => `${s.prefix}:instance:${instanceId}:running`;

export async function markHomeOpened(store: Keyed, userId: string, channelId: string): Promise<void> {
  await store.redis.set(openedKey(store, userId), channelId, 'EX', OPENED_TTL_SECONDS);
}

/** The app DM channel of each person who opened their Home tab in the last 30 days (undefined if not). */
export async function homeOpenedBy(
  store: Keyed,
  userIds: readonly string[],
): Promise<(string | undefined)[]> {
  if (userIds.length === 0) return [];
  const channels = await store.redis.mget(userIds.map((u) => openedKey(store, u)));
  return channels.map((c) => c ?? undefined);
}

export async function cachedHomeChart(
  store: Keyed,
  userId: string,
  key: string,
): Promise<string | undefined> {
  const raw = await store.redis.get(chartKey(store, userId));
  if (!raw) return undefined;
  try {
    const v = JSON.parse(raw) as { key?: unknown; fileId?: unknown };
    return v.key === key && typeof v.fileId === 'string' ? v.fileId : undefined;
  } catch {
    return undefined;
  }
}

export async function rememberHomeChart(
  store: Keyed,
  userId: string,
  key: string,
  fileId: string,
): Promise<void> {
  await store.redis.set(chartKey(store, userId), JSON.stringify({ key, fileId }), 'EX', CHART_TTL_SECONDS);
}

/**
 * Since when machines run, as the watcher saw them: a machine seen running gets the time once (the
 * first look that saw it, so at least that long), a machine seen in any other state loses it.
 */
export async function noteRunning(
  store: Keyed,
  seen: ReadonlyArray<{ readonly id: string; readonly running: boolean }>,
  at: number,
): Promise<void> {
  if (seen.length === 0) return;
  const tx = store.redis.multi();
  for (const s of seen) {
    if (s.running) tx.set(runningKey(store, s.id), String(at), 'EX', RUNNING_TTL_SECONDS, 'NX');
    else tx.del(runningKey(store, s.id));
  }
  await tx.exec();
}

export async function runningSince(
  store: Keyed,
  instanceIds: readonly string[],
): Promise<(number | undefined)[]> {
  if (instanceIds.length === 0) return [];
  const raws = await store.redis.mget(instanceIds.map((id) => runningKey(store, id)));
  return raws.map((r) => (r === null ? undefined : Number(r)));
}
