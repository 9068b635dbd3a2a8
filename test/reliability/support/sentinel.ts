import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { freePort } from '../../../src/sys/free-port.js';
import { type PrivateRedis, startPrivateRedis } from '../../../src/sys/private-redis.js';

// A replicated Redis as production runs it with Sentinel: a primary, a replica and three sentinels
// (Debian's redis-server started with --sentinel), all on loopback, each in its own folder.

export const MASTER = 'gpuops';

export interface SentinelSet {
  readonly primary: PrivateRedis;
  readonly replica: PrivateRedis;
  /** `host:port,…` for REDIS_SENTINELS. */
  readonly sentinels: string;
  /** The port of the primary now, as the sentinels say. */
  primaryPort(): Promise<number>;
  /**
   * What each sentinel says of the replica on `replicaPort` (`127.0.0.1:port: flags link`), and whether
   * every one of them lists it in sync. A failover promotes it only then: the sentinels elect whichever
   * asks first to lead, a sentinel hears of a replica only from the primary's INFO (every 10 s, at
   * nearly the same moment for all three), and a leader that has not heard of it yet aborts the failover
   * (-failover-abort-no-good-slave) and none is tried again for 10 s. Once the primary is dead, that
   * sentinel can no longer hear of it.
   */
  replicaSeen(replicaPort: number): Promise<{ byAll: boolean; seen: string }>;
  /** A client of the test's own, through the sentinels: one try a command, errors ignored. */
  connect(): Redis;
  close(): Promise<void>;
}

async function startSentinel(
  primaryPort: number,
): Promise<{ port: number; child: ChildProcess; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'gpuops-sentinel-'));
  const port = await freePort();
  const conf = join(dir, 'sentinel.conf');
  await writeFile(
    conf,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${MASTER} 127.0.0.1 ${primaryPort} 2`,
      // 3 s, not 1: on a loaded CI machine a primary that stalled for a second was taken as down and
      // failed over by the sentinels on their own, on top of the failovers a test makes, and the writes
      // the demoted primary took meanwhile were lost (a watch channel showed a machine twice).
      `sentinel down-after-milliseconds ${MASTER} 3000`,
      `sentinel failover-timeout ${MASTER} 5000`,
      `sentinel parallel-syncs ${MASTER} 1`,
      '',
    ].join('\n'),
  );
  const child = spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' });
  return { port, child, dir };
}

export async function startSentinelSet(): Promise<SentinelSet> {
  const primary = await startPrivateRedis({ install: true, appendOnly: true });
  const replica = await startPrivateRedis({
    appendOnly: true,
    extraArgs: ['--replicaof', '127.0.0.1', String(primary.port)],
  });
  const sentinels = await Promise.all([0, 1, 2].map(() => startSentinel(primary.port)));
  // Whatever fails from here on, no server or sentinel outlives the set.
  const stopAll = async () => {
    for (const s of sentinels) {
      s.child.kill('SIGKILL');
      await rm(s.dir, { recursive: true, force: true });
    }
    await replica.close();
    await primary.close();
  };
  // One client per sentinel, for the test's own questions; the first answers where the primary is.
  const asks = sentinels.map((s) => {
    const client = new Redis({ port: s.port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 1 });
    client.on('error', () => {});
    return client;
  });
  const ask = asks[0]!;
  const disconnectAll = () => {
    for (const client of asks) client.disconnect();
  };
  const primaryPort = async (): Promise<number> => {
    const [, port] = (await ask.call('SENTINEL', 'get-master-addr-by-name', MASTER)) as [string, string];
    return Number(port);
  };
  const field = (reply: string[], name: string) => reply[reply.indexOf(name) + 1];
  const replicaSeen = async (replicaPort: number) => {
    const views = await Promise.all(
      asks.map(async (client, i) => {
        const replicas = (await client.call('SENTINEL', 'replicas', MASTER).catch(() => [])) as string[][];
        const it = replicas.find((r) => field(r, 'port') === String(replicaPort));
        const [flags, link] = it ? [field(it, 'flags'), field(it, 'master-link-status')] : [];
        return {
          inSync: flags === 'slave' && link === 'ok',
          said: `${sentinels[i]!.port}: ${it ? `${flags} ${link}` : 'not listed'}`,
        };
      }),
    );
    return { byAll: views.every((v) => v.inSync), seen: views.map((v) => v.said).join(', ') };
  };
  // Ready when the replica follows the primary and every sentinel sees it in sync and its two peers:
  // a failover may be led by any of them (replicaSeen).
  const follower = new Redis(replica.url, { maxRetriesPerRequest: 1 });
  follower.on('error', () => {});
  // Sentinels find each other through hello messages every 2 s; a loaded machine takes longer.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const info = await follower.info('replication').catch(() => '');
    const peers = await Promise.all(
      asks.map(async (client) => {
        const master = (await client.call('SENTINEL', 'master', MASTER).catch(() => [])) as string[];
        return Number(field(master, 'num-other-sentinels') ?? 0);
      }),
    );
    if (
      info.includes('master_link_status:up') &&
      peers.every((n) => n >= 2) &&
      (await replicaSeen(replica.port)).byAll
    ) {
      break;
    }
    if (Date.now() > deadline) {
      disconnectAll();
      follower.disconnect();
      await stopAll();
      throw new Error('the sentinels did not see the primary, the replica and each other');
    }
    await sleep(200);
  }
  follower.disconnect();
  return {
    primary,
    replica,
    sentinels: sentinels.map((s) => `127.0.0.1:${s.port}`).join(','),
    primaryPort,
    replicaSeen,
    connect() {
      const client = new Redis({
        sentinels: sentinels.map((s) => ({ host: '127.0.0.1', port: s.port })),
        name: MASTER,
        maxRetriesPerRequest: 1,
      });
      client.on('error', () => {});
      return client;
    },
    async close() {
      disconnectAll();
      await stopAll();
    },
  };
}
