import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { Store } from './store.js';
import { watchKey } from './watch-keys.js';
import { kickedPairs, type NewOutboxEntry, PUSH_MANY_LUA, pushManyArgs } from './watch-outbox.js';

// What the state watcher saw last in each watched project, with a version. A poll commits its new
// snapshot and the messages its diff produced in ONE compare-and-set script: if another replica
// committed since this poll read the snapshot, nothing is written and nothing is posted, so each
// change is posted once however many replicas poll. Also the spend ledger the digest reads, and the
// back-off of projects whose cloud answered 429 or 5xx.
//
// Keys (under <prefix>:{watch}:): snap:<project> hash {version, data, stamp}; projects (set of watched
// projects); ledger:<project>:<day|month> hash; backoff:<project>.

export const WATCHED_KINDS = ['instance', 'k8s-cluster', 'k8s-pool', 'slurm-cluster', 'slurm-pool'] as const;
export type WatchedKind = (typeof WATCHED_KINDS)[number];

export const watchedResourceSchema = z.object({
  /** `<kind>:<id>`: stable across polls, names the resource's message. */
  key: z.string().min(1),
  kind: z.enum(WATCHED_KINDS),
  id: z.string().min(1),
  name: z.string(),
  /** What is compared between polls (state, ip, count, version…), as text. */
  fields: z.record(z.string(), z.string()),
  /** Nodes of a pool: name → what is compared (state and readiness). */
  nodes: z.record(z.string(), z.string()).optional(),
  /** The cluster a pool belongs to, for the message. */
  parent: z.string().optional(),
});
export type WatchedResource = z.infer<typeof watchedResourceSchema>;

export const projectSnapshotSchema = z.object({
  v: z.literal(1),
  polledAt: z.number(),
  resources: z.record(z.string(), watchedResourceSchema),
});
export type ProjectSnapshot = z.infer<typeof projectSnapshotSchema>;

export interface StoredSnapshot {
  /** 0 when there is none yet: the next commit records the baseline. */
  readonly version: number;
  /** Undefined when missing or from an unreadable version (then the next poll is a new baseline). */
  readonly snapshot: ProjectSnapshot | undefined;
}

export interface CommitResult {
  readonly committed: boolean;
  /** Drains to start: targets whose outbox had no drain. */
  readonly kicked: ReadonlyArray<{ readonly target: string; readonly token: string }>;
}

export interface Backoff {
  readonly until: number;
  readonly failures: number;
  readonly reason: string;
}

export interface LedgerDay {
  readonly usd: number;
  readonly gpuHours: number;
  /** GPU-hours per instance id. */
  readonly instances: Readonly<Record<string, number>>;
}

export interface SnapshotStore {
  read(projectId: string): Promise<StoredSnapshot>;
  /**
   * Writes `next` as version `expected + 1` and appends `entries` to every target's outbox, only if
   * the stored version is still `expected` and the project is still watched.
   */
  commit(
    projectId: string,
    expected: number,
    next: ProjectSnapshot,
    targets: readonly string[],
    entries: readonly NewOutboxEntry[],
  ): Promise<CommitResult>;
  drop(projectId: string): Promise<void>;
  backoff(projectId: string): Promise<Backoff | undefined>;
  setBackoff(projectId: string, backoff: Backoff): Promise<void>;
  clearBackoff(projectId: string): Promise<void>;
  /** Adds spend and GPU-hours to a day and its month. */
  addToLedger(
    projectId: string,
    day: string,
    month: string,
    add: { usd: number; gpuHours: Readonly<Record<string, number>> },
  ): Promise<void>;
  ledgerDay(projectId: string, day: string): Promise<LedgerDay>;
  ledgerMonthUsd(projectId: string, month: string): Promise<number>;
}

const COMMIT = `${PUSH_MANY_LUA}
if redis.call('SISMEMBER', KEYS[2], ARGV[3]) == 0 then return false end
local current = redis.call('HGET', KEYS[1], 'version') or '0'
if current ~= ARGV[1] then return false end
redis.call('HSET', KEYS[1], 'version', tostring(tonumber(ARGV[1]) + 1), 'data', ARGV[2], 'stamp', ARGV[4])
local out = {'ok'}
for _, v in ipairs(push_many(2, 5)) do table.insert(out, v) end
return out
`;

// The ledger in one command: with thousands of running machines, one HINCRBYFLOAT each sent through the
// client costs far more than the increments themselves. KEYS: day, month. ARGV: usd, GPU-hours of the
// day, day TTL, month TTL, then instance field and hours pairs (all positive).
const LEDGER = `
if tonumber(ARGV[1]) > 0 then
  redis.call('HINCRBYFLOAT', KEYS[1], 'usd', ARGV[1])
  redis.call('HINCRBYFLOAT', KEYS[2], 'usd', ARGV[1])
end
if tonumber(ARGV[2]) > 0 then redis.call('HINCRBYFLOAT', KEYS[1], 'gpuh', ARGV[2]) end
for i = 5, #ARGV, 2 do redis.call('HINCRBYFLOAT', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[4])
return 1
`;

interface SnapshotScripts {
  gpuopsWatchCommit(...args: (string | number)[]): Promise<string[] | null>;
  gpuopsWatchLedger(...args: (string | number)[]): Promise<number>;
}

const DAY_TTL_SECONDS = 40 * 86_400;
const MONTH_TTL_SECONDS = 400 * 86_400;

export const watchedProjectsKey = (prefix: string) => watchKey(prefix, 'projects');
export const snapshotKey = (prefix: string, projectId: string) => watchKey(prefix, 'snap', projectId);

interface KnownSnapshot {
  readonly version: string;
  readonly stamp: string;
  readonly snapshot: ProjectSnapshot;
}

// The snapshot this replica last committed or read, by connection, prefix and project: a look whose
// stored version and stamp (random per commit) are still these reads two short fields instead of the
// whole snapshot and its parse and schema check (most of a look's cost in a large fleet:
// docs/performance.md). Callers only read the snapshots they are given.
const knownByConnection = new WeakMap<Redis, Map<string, Map<string, KnownSnapshot>>>();

function knownSnapshots(redis: Redis, prefix: string): Map<string, KnownSnapshot> {
  const byPrefix = knownByConnection.get(redis) ?? new Map<string, Map<string, KnownSnapshot>>();
  knownByConnection.set(redis, byPrefix);
  const known = byPrefix.get(prefix) ?? new Map<string, KnownSnapshot>();
  byPrefix.set(prefix, known);
  return known;
}

export function createSnapshotStore(store: Pick<Store, 'redis' | 'prefix'>): SnapshotStore {
  const { prefix } = store;
  const redis = store.redis as Redis & Partial<SnapshotScripts>;
  if (typeof redis.gpuopsWatchCommit !== 'function') {
    redis.defineCommand('gpuopsWatchCommit', { lua: COMMIT });
  }
  if (typeof redis.gpuopsWatchLedger !== 'function') {
    redis.defineCommand('gpuopsWatchLedger', { lua: LEDGER, numberOfKeys: 2 });
  }
  const r = redis as Redis & SnapshotScripts;
  const ledgerKey = (projectId: string, period: string) => watchKey(prefix, 'ledger', projectId, period);
  const known = knownSnapshots(redis, prefix);
  const backoffKey = (projectId: string) => watchKey(prefix, 'backoff', projectId);

  return {
    async read(projectId) {
      const key = snapshotKey(prefix, projectId);
      const [shortVersion, shortStamp] = await redis.hmget(key, 'version', 'stamp');
      const mine = known.get(projectId);
      if (mine && shortStamp && mine.version === shortVersion && mine.stamp === shortStamp) {
        return { version: Number(shortVersion), snapshot: mine.snapshot };
      }
      const [version, data, stamp] = await redis.hmget(key, 'version', 'data', 'stamp');
      let snapshot: ProjectSnapshot | undefined;
      if (data) {
        try {
          const parsed = projectSnapshotSchema.safeParse(JSON.parse(data));
          snapshot = parsed.success ? parsed.data : undefined;
        } catch {
          snapshot = undefined;
        }
      }
      if (snapshot && version && stamp) known.set(projectId, { version, stamp, snapshot });
      else known.delete(projectId);
      return { version: Number(version ?? 0), snapshot };
    },

    async commit(projectId, expected, next, targets, entries) {
      // Typed by the caller and checked where it is read back: a schema pass here cost most of a large
      // fleet's commit (10,000 instances: about 40 ms).
      const data = JSON.stringify(next);
      const stamp = randomBytes(9).toString('base64url');
      const push = pushManyArgs(prefix, entries.length > 0 ? targets : [], entries);
      const keys = [snapshotKey(prefix, projectId), watchedProjectsKey(prefix), ...push.keys];
      const answer = await r.gpuopsWatchCommit(
        keys.length,
        ...keys,
        String(expected),
        data,
        projectId,
        stamp,
        ...push.args,
      );
      if (answer?.[0] !== 'ok') return { committed: false, kicked: [] };
      known.set(projectId, { version: String(expected + 1), stamp, snapshot: next });
      return { committed: true, kicked: kickedPairs(answer.slice(1)) };
    },

    async drop(projectId) {
      known.delete(projectId);
      await redis.del(snapshotKey(prefix, projectId), backoffKey(projectId));
    },

    async backoff(projectId) {
      const raw = await redis.get(backoffKey(projectId));
      if (!raw) return undefined;
      try {
        return JSON.parse(raw) as Backoff;
      } catch {
        return undefined;
      }
    },
    async setBackoff(projectId, backoff) {
      const ttlMs = Math.max(1_000, backoff.until - Date.now() + 3_600_000);
      await redis.set(backoffKey(projectId), JSON.stringify(backoff), 'PX', ttlMs);
    },
    async clearBackoff(projectId) {
      await redis.del(backoffKey(projectId));
    },

    async addToLedger(projectId, day, month, add) {
      const total = Object.values(add.gpuHours).reduce((a, b) => a + b, 0);
      const pairs: (string | number)[] = [];
      for (const [id, hours] of Object.entries(add.gpuHours)) {
        if (hours > 0) pairs.push(`inst:${id}`, hours);
      }
      await r.gpuopsWatchLedger(
        ledgerKey(projectId, day),
        ledgerKey(projectId, month),
        Math.max(add.usd, 0),
        Math.max(total, 0),
        DAY_TTL_SECONDS,
        MONTH_TTL_SECONDS,
        ...pairs,
      );
    },
    async ledgerDay(projectId, day) {
      const h = await redis.hgetall(ledgerKey(projectId, day));
      const instances: Record<string, number> = {};
      for (const [field, value] of Object.entries(h)) {
        if (field.startsWith('inst:')) instances[field.slice(5)] = Number(value);
      }
      return { usd: Number(h.usd ?? 0), gpuHours: Number(h.gpuh ?? 0), instances };
    },
    async ledgerMonthUsd(projectId, month) {
      return Number((await redis.hget(ledgerKey(projectId, month), 'usd')) ?? 0);
    },
  };
}
