import type { ChainableCommander } from 'ioredis';
import type { Store } from './store.js';

// What the Home tab keeps between publishes (docs/home.md):
//   <prefix>:home:opened:<user>      the person's app DM channel, set when they open the Home tab;
//                                    only their Home is re-published when their machines change
//   <prefix>:home:chart:<user>       JSON {key, fileId, at}: the spend chart last uploaded, re-used
//                                    while its data is the same or it is under 10 minutes old
//   <prefix>:instance:<id>:running   epoch ms the watcher first saw the machine running this time
//   <prefix>:home:changed:<project>  epoch ms a job of gpuops last changed a machine of the project
//                                    (only ever raised): a look at it taken before says nothing of now

const OPENED_TTL_SECONDS = 30 * 86_400;
const CHART_TTL_SECONDS = 8 * 86_400;
const RUNNING_TTL_SECONDS = 90 * 86_400;
const CHANGED_TTL_SECONDS = 30 * 86_400;

type Keyed = Pick<Store, 'redis' | 'prefix'>;

const openedKey = (s: Keyed, userId: string) => `${s.prefix}:home:opened:${userId}`;
const chartKey = (s: Keyed, userId: string) => `${s.prefix}:home:chart:${userId}`;
const runningKey = (s: Keyed, instanceId: string) => `${s.prefix}:instance:${instanceId}:running`;
const changedKey = (s: Keyed, projectId: string) => `${s.prefix}:home:changed:${projectId}`;

// Raises the stamp, never lowers it: two jobs finishing together leave the later time.
const RAISE = `local v = tonumber(redis.call('GET', KEYS[1]))
if v == nil or v < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2]) end
return 1`;

/**
 * A job of gpuops changed a machine of `projectId` (started, stopped, deleted or made one) and is
 * done at `at`: the Home tab no longer takes the state of a look at that project taken before. Queued
 * on `tx`, a MULTI the caller sends with more.
 */
export function noteMachinesChangedIn(
  tx: ChainableCommander,
  store: Keyed,
  projectId: string,
  at: number,
): ChainableCommander {
  return tx.eval(RAISE, 1, changedKey(store, projectId), String(at), String(CHANGED_TTL_SECONDS));
}

/** When a job last changed a machine of each project (undefined: not in the last 30 days), one read. */
export async function machinesChangedAt(
  store: Keyed,
  projectIds: readonly string[],
): Promise<(number | undefined)[]> {
  if (projectIds.length === 0) return [];
  const raws = await store.redis.mget(projectIds.map((p) => changedKey(store, p)));
  return raws.map((r) => (r === null ? undefined : Number(r)));
}

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

/** The spend chart last uploaded for a person: what it showed (a hash), its file, when. */
export interface HomeChart {
  readonly key: string;
  readonly fileId: string;
  readonly at: number;
}

export async function cachedHomeChart(store: Keyed, userId: string): Promise<HomeChart | undefined> {
  const raw = await store.redis.get(chartKey(store, userId));
  if (!raw) return undefined;
  try {
    const v = JSON.parse(raw) as Partial<HomeChart>;
    return typeof v.key === 'string' && typeof v.fileId === 'string' && typeof v.at === 'number'
      ? { key: v.key, fileId: v.fileId, at: v.at }
      : undefined;
  } catch {
    return undefined;
  }
}

export async function rememberHomeChart(store: Keyed, userId: string, chart: HomeChart): Promise<void> {
  await store.redis.set(chartKey(store, userId), JSON.stringify(chart), 'EX', CHART_TTL_SECONDS);
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
