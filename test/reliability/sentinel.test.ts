import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStore } from '../../src/store/store.js';
import { until } from '../support/gpuops-process.js';
import { checkOutageAnswers, sendThroughOutage } from './support/outage-answers.js';
import type { Bot, Rig } from './support/reliability-rig.js';
import { startRig } from './support/reliability-rig.js';
import { MASTER, type SentinelSet, startSentinelSet } from './support/sentinel.js';

// Redis Sentinel on real servers: a primary, a replica and three sentinels. The primary is killed
// (SIGKILL) in the middle of a stream of commands; the sentinels promote the replica and gpuops
// follows them. An acknowledgement means the job reached a replica (WAIT), so every acknowledged
// command is answered once, on whichever server is primary by then; commands that could not be
// stored on two servers are refused at once with a "try again" answer, and those caught while being
// stored are told they may or may not run (and run at most once). The old primary is restarted, and
// the sentinels make it a replica of the new one.

const LANES = 6;
const EVERY_MS = 150;
const RUN_MS = 12_000;
const KILL_AT_MS = 2_000;
const BACK_AT_MS = 5_500;
/** GPUOPS_SENTINEL_COMMANDS: send exactly that many (the 1,000), however long it takes; CI sends for RUN_MS (about 200). */
const COUNT = process.env.GPUOPS_SENTINEL_COMMANDS ? Number(process.env.GPUOPS_SENTINEL_COMMANDS) : undefined;

describe('Redis Sentinel: the primary killed in the middle of a run', () => {
  let set: SentinelSet;
  let rig: Rig;
  let bot: Bot;
  let redis: Redis;

  beforeAll(async () => {
    set = await startSentinelSet();
    rig = await startRig({ sim: { transitionMs: 100 } });
    const env = { REDIS_SENTINELS: set.sentinels, REDIS_SENTINEL_MASTER: MASTER, REDIS_WAIT_MS: '300' };
    bot = await rig.start('all', {
      env,
      lockDurationMs: 10_000,
      stalledIntervalMs: 2_000,
      workerConcurrency: 8,
    });
    redis = set.connect();
    await rig.catalogue(createStore(redis));
  }, 120_000);

  afterAll(async () => {
    redis?.disconnect();
    await rig?.close();
    await set?.close();
  });

  it('answers every acknowledged command once, and refuses in time what it could not store twice', async () => {
    const started = Date.now();
    const firstPrimary = await set.primaryPort();
    const outage = { killedAt: 0, backAt: 0 };
    const crash = (async () => {
      await sleep(KILL_AT_MS);
      await set.primary.kill();
      outage.killedAt = Date.now() - started;
      await sleep(BACK_AT_MS - KILL_AT_MS);
      // Only once the sentinels have promoted the replica (on a loaded machine that can take longer
      // than BACK_AT_MS): a primary back before the failover would simply be the primary again.
      await until(
        async () => ((await set.primaryPort().catch(() => firstPrimary)) !== firstPrimary ? true : undefined),
        'the sentinels to promote the replica',
        30_000,
      );
      // The old primary comes back; the sentinels make it a replica of the new one.
      await set.primary.restart();
      outage.backAt = Date.now() - started;
    })();

    const requests = await sendThroughOutage(rig, bot.url, {
      ...{ prefix: 'SN', lanes: LANES, everyMs: EVERY_MS, runMs: RUN_MS, started },
      ...(COUNT ? { count: COUNT } : {}),
    });
    await crash;

    // The sentinels promoted the replica.
    expect(await set.primaryPort()).not.toBe(firstPrimary);
    const { acked, refused, uncertain } = await checkOutageAnswers(rig, requests);
    expect(acked.some((r) => r.at < outage.killedAt)).toBe(true);
    // With its only replica gone, the new primary cannot hold a job on two servers until the old one
    // is back as its replica (the sentinels take about 10 s more for that): commands in between are
    // refused, never acknowledged on one server.
    const resumed = acked.filter((r) => r.at > outage.killedAt).length;

    console.info(
      `[reliability] sentinel failover: ${requests.length} commands; primary killed at ${outage.killedAt} ms, ` +
        `restarted at ${outage.backAt} ms; ${acked.length} acknowledged (${resumed} after the crash) and all answered once, ` +
        `${refused.length} refused in time, ${uncertain.length} told they may or may not run`,
    );
  }, 180_000);
});
