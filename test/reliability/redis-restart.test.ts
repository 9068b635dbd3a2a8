import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/gpuops-process.js';
import { checkOutageAnswers, sendThroughOutage } from './support/outage-answers.js';
import type { Bot, Rig } from './support/reliability-rig.js';
import { startRig } from './support/reliability-rig.js';

// Redis killed (SIGKILL, as a crash) in the middle of a stream of commands and started again on its
// append-only file (appendfsync always, as production runs it). Commands sent while it is down are
// refused at once with a "try again" answer and leave nothing behind; every command the listener
// acknowledged before, during or after the outage is still processed, once. A command caught while
// being stored (Redis died under the add, or the add outlasted the listener's 2.5 s) is told it may or
// may not run: it runs at most once, and if it runs its message ends once.

const LANES = 8;
const EVERY_MS = 120;
const RUN_MS = 5_000;
const KILL_AT_MS = 1_500;
const DOWN_MS = 1_500;

describe('Redis restarted in the middle of a run', () => {
  let rig: Rig;
  let bot: Bot;

  beforeAll(async () => {
    rig = await startRig({ appendOnly: true, sim: { transitionMs: 100 } });
    // Job locks outlast the outage (as production's 30 s do), so jobs in hand keep them and finish once;
    // a shorter stalled check only bounds how long a job lost in the crash would wait.
    bot = await rig.start('all', { lockDurationMs: 10_000, stalledIntervalMs: 2_000, workerConcurrency: 8 });
    await rig.catalogue();
  });

  afterAll(async () => {
    await rig?.close();
  });

  it('processes every acknowledged command, and refused ones leave nothing behind', async () => {
    const started = Date.now();
    const outage = { killedAt: 0, backAt: 0 };
    const crash = (async () => {
      await sleep(KILL_AT_MS);
      await rig.redisServer.kill();
      outage.killedAt = Date.now() - started;
      await sleep(DOWN_MS);
      await rig.redisServer.restart();
      outage.backAt = Date.now() - started;
    })();

    const lanes = { prefix: 'RR', lanes: LANES, everyMs: EVERY_MS, runMs: RUN_MS, started };
    const requests = await sendThroughOutage(rig, bot.url, lanes);
    await crash;

    // Every acknowledged command processed once; then, the queue empty, refused creates made nothing.
    const { acked, refused, uncertain } = await checkOutageAnswers(rig, requests, {
      messageTimeoutMs: 20_000,
      settle: () => until(async () => (await rig.pendingRequests()) === 0, 'the queue to empty', 30_000),
    });
    // The outage was real (some were refused), and requests were acknowledged again after it.
    expect(refused.length).toBeGreaterThan(0);
    expect(acked.some((r) => r.at > outage.backAt)).toBe(true);
    expect(acked.some((r) => r.at < outage.killedAt)).toBe(true);

    // Those caught while being stored ran at most once, and a create that ran says so once.
    const ranUncertain = uncertain.filter(
      (r) => r.kind === 'create' && rig.sim.control.createCount('createInstance', r.name) > 0,
    );
    for (const r of ranUncertain) {
      const done = rig.slack
        .channelView(r.sent.channelId)
        .filter((m) => new RegExp(`^Done: .*${r.name} is running`).test(String(m.text)));
      expect(done, `${r.name} ran after "may or may not run": its message`).toHaveLength(1);
    }
    // No message left by a refused command, or by one caught while being stored that never ran.
    for (let lane = 0; lane < LANES; lane++) {
      const channelId = `C0RR${lane}`;
      const creates = [...acked, ...ranUncertain].filter(
        (r) => r.kind === 'create' && r.sent.channelId === channelId,
      );
      expect(
        rig.slack.channelView(channelId),
        `messages in ${channelId}, one a create that ran`,
      ).toHaveLength(creates.length);
    }
    console.info(
      `[reliability] redis restart: ${requests.length} commands; Redis killed at ${outage.killedAt} ms, ` +
        `back at ${outage.backAt} ms; ${acked.length} acknowledged and all processed once, ` +
        `${refused.length} refused in time with nothing left behind, ` +
        `${uncertain.length} told they may or may not run (${ranUncertain.length} creates of them ran, once)`,
    );
  });
});
