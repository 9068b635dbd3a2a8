import { z } from 'zod';
import type { Store } from './store.js';
import { watchKey } from './watch-keys.js';

// What the idle-GPU watcher remembers: which instances of a project are idle now (one record per idle
// period, claimed atomically so one alert is sent however many replicas check), what people answered
// on an alert (Keep for 2 hours, Snooze for a day → a suppression; Stop → answered), and whether the
// policy already stopped an instance.
//
// Keys (under <prefix>:{watch}:): idle:<project> hash instance → record; suppress:<instance>;
// answered:<instance>; autostop:<instance>.

export const idleRecordSchema = z.object({
  instanceId: z.string().min(1),
  name: z.string(),
  type: z.string(),
  /** When the instance went idle, as far as the metrics show (at least the policy's window ago). */
  since: z.number(),
  alertedAt: z.number(),
  /** Highest GPU utilisation (percent) seen over the window. */
  maxUtil: z.number(),
});
export type IdleRecord = z.infer<typeof idleRecordSchema>;

export const suppressionSchema = z.object({
  until: z.number(),
  by: z.string().min(1),
  reason: z.enum(['keep', 'snooze']),
});
export type Suppression = z.infer<typeof suppressionSchema>;

export interface IdleState {
  /** Records the start of an idle period; true only for the one caller that created it (it alerts). */
  claim(projectId: string, record: IdleRecord): Promise<boolean>;
  records(projectId: string): Promise<IdleRecord[]>;
  /** Ends the idle periods of these instances (busy again, stopped, gone). */
  end(projectId: string, instanceIds: readonly string[]): Promise<void>;
  suppress(instanceId: string, suppression: Suppression): Promise<void>;
  suppression(instanceId: string, now?: number): Promise<Suppression | undefined>;
  /** Someone pressed Stop on the alert: the policy must not stop it on its own meanwhile. */
  markAnswered(instanceId: string, by: string, seconds: number): Promise<void>;
  answered(instanceId: string): Promise<string | undefined>;
  /** True for the one caller that may stop the instance on the policy's behalf. */
  claimAutoStop(instanceId: string, seconds: number): Promise<boolean>;
  /** Gives the claim back when the stop failed, so the next check tries again. */
  releaseAutoStop(instanceId: string): Promise<void>;
}

function parse<T>(schema: z.ZodType<T>, raw: string | null | undefined): T | undefined {
  if (!raw) return undefined;
  try {
    const parsed = schema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export function createIdleState(store: Pick<Store, 'redis' | 'prefix'>): IdleState {
  const { redis, prefix } = store;
  const idleKey = (projectId: string) => watchKey(prefix, 'idle', projectId);
  const suppressKey = (id: string) => watchKey(prefix, 'suppress', id);
  const answeredKey = (id: string) => watchKey(prefix, 'answered', id);
  const autoStopKey = (id: string) => watchKey(prefix, 'autostop', id);

  return {
    async claim(projectId, record) {
      const valid = idleRecordSchema.parse(record);
      const created = await redis.hsetnx(idleKey(projectId), valid.instanceId, JSON.stringify(valid));
      await redis.expire(idleKey(projectId), 30 * 86_400);
      return created === 1;
    },
    async records(projectId) {
      const all = await redis.hgetall(idleKey(projectId));
      return Object.values(all)
        .flatMap((raw) => {
          const r = parse(idleRecordSchema, raw);
          return r ? [r] : [];
        })
        .sort((a, b) => a.since - b.since);
    },
    async end(projectId, instanceIds) {
      if (instanceIds.length > 0) await redis.hdel(idleKey(projectId), ...instanceIds);
    },
    async suppress(instanceId, suppression) {
      const valid = suppressionSchema.parse(suppression);
      const ttlMs = Math.max(1_000, valid.until - Date.now());
      await redis.set(suppressKey(instanceId), JSON.stringify(valid), 'PX', ttlMs);
    },
    async suppression(instanceId, now = Date.now()) {
      const s = parse(suppressionSchema, await redis.get(suppressKey(instanceId)));
      return s && s.until > now ? s : undefined;
    },
    async markAnswered(instanceId, by, seconds) {
      await redis.set(answeredKey(instanceId), by, 'EX', Math.max(1, Math.round(seconds)));
    },
    async answered(instanceId) {
      return (await redis.get(answeredKey(instanceId))) ?? undefined;
    },
    async claimAutoStop(instanceId, seconds) {
      const set = await redis.set(autoStopKey(instanceId), '1', 'EX', Math.max(1, Math.round(seconds)), 'NX');
      return set === 'OK';
    },
    async releaseAutoStop(instanceId) {
      await redis.del(autoStopKey(instanceId));
    },
  };
}
