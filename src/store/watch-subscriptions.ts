import { z } from 'zod';
import { countedProjectsKey } from './spend-projects.js';
import type { Store } from './store.js';
import { watchKey } from './watch-keys.js';
import { snapshotKey, watchedProjectsKey } from './watch-snapshots.js';

// Which channels watch which project (`/gpu watch on|off`). A channel watches one project (the one it
// works in when it turns watching on); a project is polled while at least one channel watches it or its
// spend is counted (store/spend-projects.ts). Its snapshot is dropped with its last watcher unless its
// spend is counted, so watching again starts from a fresh baseline; a counted project's snapshot and
// ledger go on, and a new watch gets the changes from the next look on.
//
// Keys (under <prefix>:{watch}:): channel:<channel> (JSON), project:<project>:channels (set),
// projects (set).

export const channelWatchSchema = z.object({
  channelId: z.string().min(1),
  projectId: z.string().min(1),
  projectName: z.string().optional(),
  by: z.string().min(1),
  since: z.number(),
});
export type ChannelWatch = z.infer<typeof channelWatchSchema>;

export interface WatchSubscriptions {
  /** Starts (or moves) a channel's watch; returns the previous one, if any. */
  watch(entry: ChannelWatch): Promise<ChannelWatch | undefined>;
  /** Ends a channel's watch; returns what it was. */
  unwatch(channelId: string): Promise<ChannelWatch | undefined>;
  watchOf(channelId: string): Promise<ChannelWatch | undefined>;
  channelsOf(projectId: string): Promise<string[]>;
  projects(): Promise<string[]>;
  /** Every watching channel with its watch. */
  all(): Promise<ChannelWatch[]>;
}

export function createWatchSubscriptions(store: Pick<Store, 'redis' | 'prefix'>): WatchSubscriptions {
  const { redis, prefix } = store;
  const channelKey = (channelId: string) => watchKey(prefix, 'channel', channelId);
  const membersKey = (projectId: string) => watchKey(prefix, 'project', projectId, 'channels');
  const projectsKey = watchedProjectsKey(prefix);

  const read = (raw: string | null): ChannelWatch | undefined => {
    if (!raw) return undefined;
    try {
      const parsed = channelWatchSchema.safeParse(JSON.parse(raw));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  };

  const watchOf = async (channelId: string) => read(await redis.get(channelKey(channelId)));

  /** Drops the project from the polled set (and its snapshot) when no channel watches it any more. */
  const leave = async (channelId: string, projectId: string) => {
    await redis.srem(membersKey(projectId), channelId);
    if ((await redis.scard(membersKey(projectId))) > 0) return;
    if ((await redis.sismember(countedProjectsKey(prefix), projectId)) === 0) {
      await redis.multi().srem(projectsKey, projectId).del(snapshotKey(prefix, projectId)).exec();
    }
  };

  return {
    async watch(entry) {
      const valid = channelWatchSchema.parse(entry);
      const previous = await watchOf(valid.channelId);
      await redis
        .multi()
        .set(channelKey(valid.channelId), JSON.stringify(valid))
        .sadd(membersKey(valid.projectId), valid.channelId)
        .sadd(projectsKey, valid.projectId)
        .exec();
      if (previous && previous.projectId !== valid.projectId)
        await leave(valid.channelId, previous.projectId);
      return previous;
    },
    async unwatch(channelId) {
      const previous = await watchOf(channelId);
      await redis.del(channelKey(channelId));
      if (previous) await leave(channelId, previous.projectId);
      return previous;
    },
    watchOf,
    channelsOf: async (projectId) => (await redis.smembers(membersKey(projectId))).sort(),
    projects: async () => (await redis.smembers(projectsKey)).sort(),
    async all() {
      const projects = await redis.smembers(projectsKey);
      const channels = (await Promise.all(projects.map((p) => redis.smembers(membersKey(p))))).flat();
      if (channels.length === 0) return [];
      const raws = await redis.mget(channels.map(channelKey));
      return raws.flatMap((raw) => {
        const w = read(raw);
        return w ? [w] : [];
      });
    },
  };
}
