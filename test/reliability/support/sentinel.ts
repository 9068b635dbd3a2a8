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
  const ask = new Redis({
    port: sentinels[0]!.port,
    host: '127.0.0.1',
    lazyConnect: true,
    maxRetriesPerRequest: 1,
  });
  ask.on('error', () => {});
  const primaryPort = async (): Promise<number> => {
    const [, port] = (await ask.call('SENTINEL', 'get-master-addr-by-name', MASTER)) as [string, string];
    return Number(port);
  };
  // Ready when the replica follows the primary and every sentinel sees both and its two peers.
  const follower = new Redis(replica.url, { maxRetriesPerRequest: 1 });
  follower.on('error', () => {});
  // Sentinels find each other through hello messages every 2 s; a loaded machine takes longer.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const info = await follower.info('replication').catch(() => '');
    const master = (await ask.call('SENTINEL', 'master', MASTER).catch(() => [])) as string[];
    const field = (name: string) => Number(master[master.indexOf(name) + 1] ?? 0);
    if (
      info.includes('master_link_status:up') &&
      field('num-slaves') >= 1 &&
      field('num-other-sentinels') >= 2
    ) {
      break;
    }
    if (Date.now() > deadline) {
      ask.disconnect();
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
      ask.disconnect();
      await stopAll();
    },
  };
}
