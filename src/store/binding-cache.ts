import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '../log/logger.js';

// The channels' project bindings kept in the process, kept true by Redis' client-side caching: the
// store's connection turns on `CLIENT TRACKING … REDIRECT <id> OPTIN` and marks each binding it reads
// (`CLIENT CACHING yes` just before the GET), and Redis sends a key's invalidation to a connection of
// its own, subscribed to `__redis__:invalidate` (RESP2's redirect mode), whenever any client changes
// the key. Only binding keys are tracked (OPTIN), so the job records and lists the same connection
// reads and writes on every request send no invalidations.
//
// A stale binding is never served from here: the whole cache is dropped, and nothing is cached,
// whenever either connection closes (a reconnect, a restart, a Sentinel failover: both connections
// then find the primary again), and it is used again only once the store's connection tracks with its
// redirect naming this process' invalidation connection on the same server (checked by the
// connection's name, random per process, since client ids are per server). A read whose reply
// crosses an invalidation of its key, or a drop, is returned but not kept. Each entry also expires
// after `maxAgeMs`, a bound for an invalidation connection that died without the socket closing.

export const INVALIDATION_CHANNEL = '__redis__:invalidate';

export interface BindingCache {
  /** The key's value: from the process while tracking holds, else read (and kept when it may be). */
  get(key: string): Promise<string | null>;
  /** Forgets a key this process has just written (its own invalidation may still be on the way). */
  forget(key: string): void;
  /** Whether the cache is in use now: tracking is established on both connections. */
  readonly tracking: boolean;
  /** Resolves once tracking is established (tests and start-up; never needed to read). */
  ready(): Promise<void>;
}

export interface BindingCacheOptions {
  /** The store's connection: its reads are tracked. */
  readonly redis: Redis;
  /** A connection of its own, only for the invalidations (it becomes a subscriber). */
  readonly invalidations: Redis;
  readonly log: Logger;
  /** How long an entry is kept at most, invalidated or not; default 30 s. */
  readonly maxAgeMs?: number;
}

interface Entry {
  readonly value: string | null;
  readonly until: number;
}

const DEFAULT_MAX_AGE_MS = 30_000;

export function trackBindings(options: BindingCacheOptions): BindingCache {
  const { redis, invalidations, log } = options;
  // Over RESP3 ioredis would drop the invalidations, and the cache would never be corrected.
  if ((invalidations.options as { protocol?: number }).protocol !== 2)
    throw new Error('The binding cache needs its invalidation connection on RESP2 (protocol: 2).');
  const maxAgeMs = options.maxAgeMs ?? DEFAULT_MAX_AGE_MS;
  const name = `gpuops-invalidations-${randomBytes(6).toString('hex')}`;
  const entries = new Map<string, Entry>();
  // Reads in flight that may keep their answer: an invalidation of the key (or a drop) takes it away.
  const pending = new Map<string, symbol>();
  let on = false;
  // Bumped by every drop: a set-up or read begun before it does not count.
  let epoch = 0;
  // The invalidation connection's id on its server, once it is subscribed there.
  let redirectId: number | undefined;
  let waiters: Array<() => void> = [];

  const drop = () => {
    on = false;
    epoch++;
    entries.clear();
    pending.clear();
  };
  const warn = (err: unknown, msg: string) => log.warn({ err }, msg);

  const enable = async () => {
    const at = epoch;
    const id = redirectId;
    if (id === undefined || redis.status !== 'ready' || invalidations.status !== 'ready') return;
    // Ids are per server: the redirect must name our own connection on the server this one talks to
    // (after a failover one of them may still be on the old primary).
    const listed = String(await redis.call('CLIENT', 'LIST', 'ID', String(id)));
    if (at !== epoch) return;
    if (!listed.includes(`name=${name} `)) {
      log.info('binding cache: the invalidation connection is on another Redis server; reconnecting it');
      invalidations.disconnect(true);
      return;
    }
    const replies = await redis
      .pipeline()
      .call('CLIENT', 'TRACKING', 'OFF')
      .call('CLIENT', 'TRACKING', 'ON', 'REDIRECT', String(id), 'OPTIN')
      .exec();
    const failed = replies?.find(([err]) => err)?.[0];
    if (failed) throw failed;
    if (at !== epoch || redirectId !== id) return;
    on = true;
    const woken = waiters;
    waiters = [];
    for (const wake of woken) wake();
  };
  const tryEnable = () => {
    enable().catch((err: unknown) => warn(err, 'binding cache: could not turn on tracking; reading Redis'));
  };

  invalidations.on('close', () => {
    redirectId = undefined;
    drop();
  });
  const subscribe = () => {
    const at = epoch;
    (async () => {
      await invalidations.call('CLIENT', 'SETNAME', name);
      const id = Number(await invalidations.call('CLIENT', 'ID'));
      await invalidations.subscribe(INVALIDATION_CHANNEL);
      if (at !== epoch) return;
      redirectId = id;
      await enable();
    })().catch((err: unknown) =>
      warn(err, 'binding cache: could not subscribe to invalidations; reading Redis'),
    );
  };
  invalidations.on('ready', subscribe);
  invalidations.on('messageBuffer', (channel: Buffer | string, keys: unknown) => {
    if (String(channel) !== INVALIDATION_CHANNEL) return;
    // null: the whole database was flushed. Tracking stays on; reads in flight lose their mark.
    if (!Array.isArray(keys)) {
      entries.clear();
      pending.clear();
      return;
    }
    for (const key of keys) {
      const k = String(key);
      entries.delete(k);
      pending.delete(k);
    }
  });
  redis.on('close', drop);
  redis.on('ready', tryEnable);
  // Connections already up when the cache is made (the composition root connects them first).
  if (invalidations.status === 'ready') subscribe();

  return {
    get tracking() {
      return on;
    },
    ready() {
      return on ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve));
    },
    forget(key) {
      entries.delete(key);
      pending.delete(key);
    },
    async get(key) {
      if (entries.has(key)) {
        // A hit answers after the event loop's poll phase, as the Redis reply it replaces did: the
        // requests that arrived in the same turn then go on together. Answering in the same turn made
        // the acknowledgement cost 7-10 % more CPU under load (docs/performance.md, section 8).
        await new Promise<void>((resolve) => setImmediate(resolve));
        // Looked up after the wait: an invalidation that came in meanwhile is heeded.
        const hit = entries.get(key);
        if (hit && hit.until > Date.now()) return hit.value;
      }
      if (!on) return redis.get(key);
      const at = epoch;
      const mark = Symbol(key);
      pending.set(key, mark);
      // One write: CLIENT CACHING yes applies to the command right after it on this connection.
      const replies = await redis.pipeline().call('CLIENT', 'CACHING', 'yes').get(key).exec();
      const [marked, read] = replies ?? [];
      if (read?.[0]) throw read[0];
      const value = (read?.[1] ?? null) as string | null;
      const keep = !marked?.[0] && at === epoch && on && pending.get(key) === mark;
      if (pending.get(key) === mark) pending.delete(key);
      if (keep) entries.set(key, { value, until: Date.now() + maxAgeMs });
      return value;
    },
  };
}
