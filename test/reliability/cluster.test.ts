import { setTimeout as sleep } from 'node:timers/promises';
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLUSTER_STORE_PREFIX, createStore, type Store } from '../../src/store/store.js';
import { createSnapshotStore } from '../../src/store/watch-snapshots.js';
import { until } from '../support/gpuops-process.js';
import { checkOutageAnswers, sendThroughOutage } from './support/outage-answers.js';
import { type RedisCluster, startRedisCluster } from './support/redis-cluster.js';
import type { Bot, Rig } from './support/reliability-rig.js';
import { finalOf, messageOf, slash, startRig, TYPE, WATCHING_POLICY } from './support/reliability-rig.js';

// Redis Cluster on real servers: three primaries, three replicas. gpuops runs on it end to end (the
// queue under the `{gpuops}` hash tag, the store under `{gpuops}` too, so every script and transaction
// stays in one slot), with a channel watching the project. The primary holding that slot is killed
// (SIGKILL) in the middle of a stream of commands; its replica takes over and gpuops follows. As with
// Sentinel, an acknowledgement means the job reached a replica (WAIT on that shard's primary), so
// every acknowledged command is answered once; commands that could not be stored on two servers are
// refused at once; the old primary comes back as a replica. Before that, a channel watches the
// project and follows a machine made and stopped.

const LANES = 6;
const EVERY_MS = 150;
const RUN_MS = 10_000;
const KILL_AT_MS = 2_000;
const WATCH_CHANNEL = 'C0CLWATCH';

describe('Redis Cluster: end to end and watchers, and a primary killed in the middle of a run', () => {
  let cluster: RedisCluster;
  let rig: Rig;
  let bot: Bot;
  let redis: Cluster;
  let store: Store;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    rig = await startRig({ sim: { transitionMs: 100 } });
    const policy = await rig.policy(WATCHING_POLICY);
    const env = { REDIS_CLUSTER_NODES: cluster.addresses, REDIS_WAIT_MS: '300', GPUOPS_POLICY: policy };
    bot = await rig.start('all', {
      env,
      lockDurationMs: 10_000,
      stalledIntervalMs: 2_000,
      workerConcurrency: 8,
    });
    redis = cluster.connect();
    store = createStore(redis as never, CLUSTER_STORE_PREFIX);
    await rig.catalogue(store);
  }, 120_000);

  afterAll(async () => {
    redis?.disconnect();
    await rig?.close();
    await cluster?.close();
  });

  it('keeps the queue and the store each in one slot, on one shard', async () => {
    const keys: string[] = [];
    for (const node of redis.nodes('master')) {
      let cursor = '0';
      do {
        const [next, batch] = await node.scan(cursor, 'COUNT', 500);
        cursor = next;
        keys.push(...batch.map((k) => `${node.options.port} ${k}`));
      } while (cursor !== '0');
    }
    // Everything gpuops wrote (the catalogue, the queue's scheduler) carries the hash tag.
    expect(keys.length).toBeGreaterThan(0);
    for (const k of keys) expect(k.split(' ')[1]).toMatch(/^\{gpuops\}:/);
    expect(new Set(keys.map((k) => k.split(' ')[0])).size).toBe(1);
  });

  it('runs a watcher on the cluster: a machine made and stopped shows as one message, edited in place', async () => {
    const watch = await slash(rig, bot.url, 'watch on', { channelId: WATCH_CHANNEL });
    expect(String((watch.response.json() as { text?: string }).text)).toContain('now watches project');
    const snapshots = createSnapshotStore(store);
    await until(
      async () => ((await snapshots.read(rig.sim.info.projectId)).version > 0 ? true : undefined),
      'the watcher baseline',
      30_000,
    );
    const shown = () => rig.slack.channelView(WATCH_CHANNEL).map((m) => String(m.text));
    const create = await slash(rig, bot.url, `create cl-watched ${TYPE}`, { channelId: 'C0CLW2' });
    await finalOf(rig, 'C0CLW2', await messageOf(rig, create, 30_000), 30_000);
    await until(
      async () => (shown().some((t) => /^Instance cl-watched: running/.test(t)) ? true : undefined),
      'the watcher to announce the new machine',
      30_000,
    );
    const stop = await slash(rig, bot.url, 'stop cl-watched', { channelId: 'C0CLW2' });
    await finalOf(rig, 'C0CLW2', await messageOf(rig, stop, 30_000), 30_000);
    await until(
      async () => (shown().some((t) => /^Instance cl-watched: stopped/.test(t)) ? true : undefined),
      'the watcher to show it stopped',
      30_000,
    );
    expect(shown()).toHaveLength(1);
    // Off again: the failover run below makes a hundred machines this channel need not hear of.
    const off = await slash(rig, bot.url, 'watch off', { channelId: WATCH_CHANNEL });
    expect(off.response.status).toBe(200);
  });

  it('answers every acknowledged command once through the failover', async () => {
    const started = Date.now();
    const victim = await cluster.queuePrimary();
    const outage = { killedAt: 0, backAt: 0, promotedAt: 0 };
    const crash = (async () => {
      await sleep(KILL_AT_MS);
      await cluster.kill(victim);
      outage.killedAt = Date.now() - started;
      // Once its replica holds the slot, the old primary comes back (and becomes that one's replica).
      await until(
        async () => ((await cluster.queuePrimary().catch(() => victim)) !== victim ? true : undefined),
        'the replica to take over the queue slot',
        30_000,
      );
      outage.promotedAt = Date.now() - started;
      await cluster.restart(victim);
      outage.backAt = Date.now() - started;
    })();

    const lanes = { prefix: 'CL', lanes: LANES, everyMs: EVERY_MS, runMs: RUN_MS, started };
    const requests = await sendThroughOutage(rig, bot.url, lanes);
    await crash;
    await cluster.settled();

    expect(await cluster.queuePrimary()).not.toBe(victim);
    const { acked, refused, uncertain } = await checkOutageAnswers(rig, requests);
    expect(acked.some((r) => r.at < outage.killedAt)).toBe(true);
    const resumed = acked.filter((r) => r.at > outage.killedAt).length;

    console.info(
      `[reliability] cluster failover: ${requests.length} commands; primary of the queue slot killed at ` +
        `${outage.killedAt} ms, replica in charge at ${outage.promotedAt} ms, old primary back at ${outage.backAt} ms; ` +
        `${acked.length} acknowledged (${resumed} after the crash) and all answered once, ${refused.length} refused in time, ` +
        `${uncertain.length} told they may or may not run`,
    );
  }, 180_000);
});
