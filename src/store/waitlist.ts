import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Store } from './store.js';
import { watchKey } from './watch-keys.js';

// The capacity waitlist: a channel asks to be told when the cloud lists capacity for an instance type
// (`/gpu waitlist <type> [<count>]`). An entry is taken off the list by whoever tells the channel, in
// one atomic step, so the channel hears it once however many replicas check.
//
// Keys (under <prefix>:{watch}:): waitlist (hash id → entry), waitlist:channel:<channel> (set of ids).

export const waitlistEntrySchema = z.object({
  id: z.string().regex(/^w-[0-9a-f]{4,12}$/),
  channelId: z.string().min(1),
  projectId: z.string().min(1),
  type: z.string().min(1),
  count: z.number().int().min(1),
  by: z.string().min(1),
  createdAt: z.number(),
});
export type WaitlistEntry = z.infer<typeof waitlistEntrySchema>;

export const MAX_WAITLIST_PER_CHANNEL = 25;

export interface Waitlist {
  add(entry: Omit<WaitlistEntry, 'id'>): Promise<WaitlistEntry>;
  list(channelId: string): Promise<WaitlistEntry[]>;
  /** Removes a channel's entry; undefined when the channel has no entry with that id. */
  remove(channelId: string, id: string): Promise<WaitlistEntry | undefined>;
  all(): Promise<WaitlistEntry[]>;
  /** Takes an entry off the list to tell its channel; true only for the one caller that took it. */
  take(entry: WaitlistEntry): Promise<boolean>;
}

export function createWaitlist(store: Pick<Store, 'redis' | 'prefix'>): Waitlist {
  const { redis, prefix } = store;
  const allKey = watchKey(prefix, 'waitlist');
  const channelKey = (channelId: string) => watchKey(prefix, 'waitlist', 'channel', channelId);

  const read = (raw: string | null | undefined): WaitlistEntry | undefined => {
    if (!raw) return undefined;
    try {
      const parsed = waitlistEntrySchema.safeParse(JSON.parse(raw));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  };

  return {
    async add(input) {
      for (let tries = 0; ; tries++) {
        // Short ids people can type; longer ones after collisions.
        const id = `w-${randomBytes(tries < 5 ? 2 : 6).toString('hex')}`;
        const entry = waitlistEntrySchema.parse({ ...input, id });
        if ((await redis.hsetnx(allKey, id, JSON.stringify(entry))) === 1) {
          await redis.sadd(channelKey(entry.channelId), id);
          return entry;
        }
      }
    },
    async list(channelId) {
      const ids = await redis.smembers(channelKey(channelId));
      if (ids.length === 0) return [];
      const raws = await redis.hmget(allKey, ...ids);
      const stale = ids.filter((_, i) => raws[i] === null);
      if (stale.length > 0) await redis.srem(channelKey(channelId), ...stale);
      return raws
        .flatMap((raw) => {
          const e = read(raw);
          return e ? [e] : [];
        })
        .sort((a, b) => a.createdAt - b.createdAt);
    },
    async remove(channelId, id) {
      const entry = read(await redis.hget(allKey, id));
      if (!entry || entry.channelId !== channelId) return undefined;
      const removed = await redis.hdel(allKey, id);
      await redis.srem(channelKey(channelId), id);
      return removed === 1 ? entry : undefined;
    },
    async all() {
      return Object.values(await redis.hgetall(allKey))
        .flatMap((raw) => {
          const e = read(raw);
          return e ? [e] : [];
        })
        .sort((a, b) => a.createdAt - b.createdAt);
    },
    async take(entry) {
      const removed = await redis.hdel(allKey, entry.id);
      await redis.srem(channelKey(entry.channelId), entry.id);
      return removed === 1;
    },
  };
}
