import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Cluster, Redis } from 'ioredis';
import { QUEUE_PREFIX } from '../../../src/jobs/queue.js';
import { type PrivateRedis, startPrivateRedis } from '../../../src/sys/private-redis.js';

// A Redis Cluster as production runs one: three primaries and three replicas (redis-server
// --cluster-enabled yes, joined by `redis-cli --cluster create … --cluster-replicas 1`), on loopback,
// each in its own folder. A node is judged failed after 1 s (cluster-node-timeout), so a killed
// primary's replica takes its slots within a few seconds.

const run = promisify(execFile);
const NODE_TIMEOUT_MS = 1_000;

export interface RedisCluster {
  readonly nodes: readonly PrivateRedis[];
  /** `host:port,…` for REDIS_CLUSTER_NODES. */
  readonly addresses: string;
  /** A client of the test's own: one try a command, errors ignored (the test kills nodes on purpose). */
  connect(): Cluster;
  /** The node that is primary for the queue's slot now (the `{gpuops}` hash tag). */
  queuePrimary(): Promise<PrivateRedis>;
  /** Kills a node as a crash would (SIGKILL), keeping its folder. */
  kill(node: PrivateRedis): Promise<void>;
  /** Starts a killed node again on its port and folder: it rejoins, as a replica if it was replaced. */
  restart(node: PrivateRedis): Promise<void>;
  /** Until every slot is served, the cluster says ok on every running node, and every replica is in sync. */
  settled(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

async function ask(port: number, ...args: string[]): Promise<string> {
  const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  try {
    await client.connect();
    return String(await client.call(args[0]!, ...args.slice(1)));
  } finally {
    client.disconnect();
  }
}

export async function startRedisCluster(): Promise<RedisCluster> {
  const nodes: PrivateRedis[] = [];
  const down = new Set<PrivateRedis>();
  const close = async () => {
    await Promise.allSettled(nodes.map((n) => n.close()));
  };
  try {
    for (let i = 0; i < 6; i++) {
      nodes.push(
        await startPrivateRedis({
          install: i === 0,
          extraArgs: [
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            'nodes.conf',
            '--cluster-node-timeout',
            String(NODE_TIMEOUT_MS),
            // A replica that never synced may not take over: sync at once, not 5 s after it asks.
            '--repl-diskless-sync-delay',
            '0',
          ],
        }),
      );
    }
    await run('redis-cli', [
      '--cluster',
      'create',
      ...nodes.map((n) => `127.0.0.1:${n.port}`),
      '--cluster-replicas',
      '1',
      '--cluster-yes',
    ]);
  } catch (err) {
    await close();
    throw err;
  }

  const settled = async (timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const up = nodes.filter((n) => !down.has(n));
      const infos = await Promise.all(up.map((n) => ask(n.port, 'CLUSTER', 'INFO').catch(() => '')));
      const roles = await Promise.all(up.map((n) => ask(n.port, 'INFO', 'replication').catch(() => '')));
      const synced = roles.every((r) => r.includes('role:master') || r.includes('master_link_status:up'));
      const ok = infos.every((i) => i.includes('cluster_state:ok') && i.includes('cluster_slots_ok:16384'));
      if (ok && synced) return;
      if (Date.now() > deadline) throw new Error('the Redis Cluster did not settle in time');
      await sleep(200);
    }
  };
  try {
    await settled();
  } catch (err) {
    await close();
    throw err;
  }

  const queuePrimary = async () => {
    const live = nodes.find((n) => !down.has(n))!;
    const slot = Number(await ask(live.port, 'CLUSTER', 'KEYSLOT', QUEUE_PREFIX));
    const client = new Redis({ port: live.port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
    client.on('error', () => {});
    try {
      const ranges = (await client.call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number]]>;
      const range = ranges.find(([from, to]) => slot >= from && slot <= to);
      const port = range?.[2][1];
      const node = nodes.find((n) => n.port === port);
      if (!node) throw new Error(`no node serves slot ${slot}`);
      return node;
    } finally {
      client.disconnect();
    }
  };

  return {
    nodes,
    addresses: nodes.map((n) => `127.0.0.1:${n.port}`).join(','),
    connect() {
      const client = new Cluster(
        nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
        { redisOptions: { maxRetriesPerRequest: 1 } },
      );
      client.on('error', () => {});
      return client;
    },
    queuePrimary,
    async kill(node) {
      down.add(node);
      await node.kill();
    },
    async restart(node) {
      await node.restart();
      down.delete(node);
    },
    settled,
    close,
  };
}
