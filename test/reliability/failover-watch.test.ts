import { type Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLUSTER_STORE_PREFIX, createStore, type Store } from '../../src/store/store.js';
import { createSnapshotStore } from '../../src/store/watch-snapshots.js';
import type { PrivateRedis } from '../../src/sys/private-redis.js';
import { until } from '../support/until.js';
import { startRedisCluster } from './support/redis-cluster.js';
import type { Bot, Rig } from './support/reliability-rig.js';
import { finalOf, messageOf, slash, startRig, TYPE, WATCHING_POLICY } from './support/reliability-rig.js';
import { MASTER, startSentinelSet } from './support/sentinel.js';

// Issue 17: the workers, idle between two looks when the primary under them is killed, must go on
// fetching once a replica has taken over. On a Redis Cluster the watchers' worker used to stop for
// good (a watching channel fell silent until the process restarted): ioredis' cluster client never
// settled the connect() BullMQ awaited when resetting its blocking connection during the failover.
// Two failovers in a row (the second kills the promoted replica), each followed by a machine made
// through gpuops: its request must be done (the request worker) and the machine announced in the
// watching channel (the watchers' worker). The same on Sentinel, which never had the hole.

const WATCH_CHANNEL = 'C0FWWATCH';
const REQUEST_CHANNEL = 'C0FWREQ';
const FAILOVERS = 2;

/** A replicated Redis whose primary can be killed, and what gpuops and the test connect to it with. */
interface Replicated {
  readonly env: Record<string, string>;
  /** A connection of the test's own, and the store on it as gpuops keys it. */
  readonly redis: Redis | Cluster;
  readonly store: Store;
  /** SIGKILLs the primary gpuops uses, waits until a replica took over, restarts it as a replica. */
  failover(round: number): Promise<void>;
  close(): Promise<void>;
}

async function onCluster(): Promise<Replicated> {
  const cluster = await startRedisCluster();
  const redis = cluster.connect();
  return {
    env: { REDIS_CLUSTER_NODES: cluster.addresses },
    redis,
    store: createStore(redis as never, CLUSTER_STORE_PREFIX),
    async failover(round) {
      const victim = await cluster.queuePrimary();
      await cluster.kill(victim);
      await until(
        `the replica to take over the queue slot (failover ${round})`,
        async () => ((await cluster.queuePrimary().catch(() => victim)) !== victim ? true : undefined),
        30_000,
        100,
      );
      // It rejoins as the new primary's replica, so the next failover has one to promote.
      await cluster.restart(victim);
      await cluster.settled();
    },
    async close() {
      redis.disconnect();
      await cluster.close();
    },
  };
}

/**
 * Until `node` answers as a replica in sync with the primary `primaryPort()` names, pointing it there
 * again every few seconds: pointed once, a fresh-clone CI run waited 60 s in vain (the sentinels'
 * answer may still be settling right after a failover). On a timeout it says what the node reports.
 */
async function rejoined(node: PrivateRedis, primaryPort: () => Promise<number>, what: string): Promise<void> {
  const client = new Redis(node.url, { maxRetriesPerRequest: 1, lazyConnect: true });
  client.on('error', () => {});
  let pointedAt = 0;
  let info = '';
  try {
    await until(
      what,
      async () => {
        info = await client.info('replication').catch(() => '');
        if (info.includes('master_link_status:up')) return true;
        if (Date.now() - pointedAt > 5_000) {
          pointedAt = Date.now();
          await follow(node, await primaryPort()).catch(() => {});
        }
        return undefined;
      },
      60_000,
      200,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; it says: ${info.replace(/\r?\n/g, ' ')}`);
  } finally {
    client.disconnect();
  }
}

/** Makes `node` a replica of the primary on `primaryPort`. */
async function follow(node: PrivateRedis, primaryPort: number): Promise<void> {
  const client = new Redis(node.url, { maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  try {
    await client.call('REPLICAOF', '127.0.0.1', String(primaryPort));
  } finally {
    client.disconnect();
  }
}

async function onSentinel(): Promise<Replicated> {
  const set = await startSentinelSet();
  const redis = set.connect();
  return {
    env: { REDIS_SENTINELS: set.sentinels, REDIS_SENTINEL_MASTER: MASTER },
    redis,
    store: createStore(redis),
    async failover(round) {
      const port = await set.primaryPort();
      const victim = [set.primary, set.replica].find((n) => n.port === port)!;
      await victim.kill();
      // Sentinel starts no second failover of a primary within twice its failover-timeout (10 s).
      await until(
        `the sentinels to promote the replica (failover ${round})`,
        async () => ((await set.primaryPort().catch(() => port)) !== port ? true : undefined),
        60_000,
        100,
      );
      await victim.restart();
      // It comes back as a primary of its own. Sentinel turns it into the new primary's replica, but
      // only after it has been up for 8 s and a sentinel's next look at it (every 10 s), and not at all
      // while a sentinel is in TILT (a loaded machine: a fresh-clone CI run waited 60 s in vain). The
      // test does what an operator restarting a node does: points it at the primary the sentinels name.
      await rejoined(
        victim,
        () => set.primaryPort(),
        `the old primary to follow the new one (failover ${round})`,
      );
    },
    async close() {
      redis.disconnect();
      await set.close();
    },
  };
}

describe.each([
  ['Redis Cluster', onCluster],
  ['Redis Sentinel', onSentinel],
])('%s: the workers keep fetching after the primary under them is killed', (_name, start) => {
  let replicated: Replicated;
  let rig: Rig;
  let bot: Bot;

  beforeAll(async () => {
    replicated = await start();
    rig = await startRig({ sim: { transitionMs: 100 } });
    const policy = await rig.policy(WATCHING_POLICY);
    bot = await rig.start('all', {
      env: { ...replicated.env, REDIS_WAIT_MS: '300', GPUOPS_POLICY: policy },
      lockDurationMs: 10_000,
      stalledIntervalMs: 2_000,
    });
    await rig.catalogue(replicated.store);
  }, 120_000);

  afterAll(async () => {
    await rig?.close();
    await replicated?.close();
  });

  it('announces a machine made after each of two failovers, and the request that made it is done', async () => {
    const watch = await slash(rig, bot.url, 'watch on', { channelId: WATCH_CHANNEL });
    expect(String((watch.response.json() as { text?: string }).text)).toContain('now watches project');
    const snapshots = createSnapshotStore(replicated.store);
    await until('the watcher baseline', async () =>
      (await snapshots.read(rig.sim.info.projectId)).version > 0 ? true : undefined,
    );
    const shown = () => rig.slack.channelView(WATCH_CHANNEL).map((m) => String(m.text));
    const made: string[] = [];
    let attempt = 0;

    for (let round = 1; round <= FAILOVERS; round++) {
      // Killed between two looks (one a second): the watchers' worker is blocked waiting for the next.
      await replicated.failover(round);
      // The listener's fail-fast connections may refuse a request or two while they catch up with the
      // new primary (the listener's own business, tested elsewhere): send until one is taken.
      const { name, create } = await until(
        `the listener to take a create after failover ${round}`,
        async () => {
          const name = `fw-${round}-${++attempt}`;
          const create = await slash(rig, bot.url, `create ${name} ${TYPE}`, { channelId: REQUEST_CHANNEL });
          return create.response.text === '' ? { name, create } : undefined;
        },
        30_000,
        500,
      );
      made.push(name);
      const done = await finalOf(rig, REQUEST_CHANNEL, await messageOf(rig, create, 30_000), 60_000);
      expect(done.text, `the request worker after failover ${round}`).toMatch(/^Done: /);
      // A look a second: the machine shows within seconds, unless the watchers stopped fetching.
      await until(
        `the watcher to announce ${name} after failover ${round}`,
        () => (shown().some((t) => t.startsWith(`Instance ${name}: running`)) ? true : undefined),
        30_000,
        100,
      );
    }
    for (const name of made) {
      expect(
        shown().filter((t) => t.startsWith(`Instance ${name}: `)),
        shown().join(' | '),
      ).toHaveLength(1);
    }
  }, 240_000);
});
