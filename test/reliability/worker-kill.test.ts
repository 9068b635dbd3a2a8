import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/gpuops-process.js';
import type { Bot, BotProcess, Rig } from './support/reliability-rig.js';
import { finalOf, finals, leaks, messageOf, slash, startRig, TYPE } from './support/reliability-rig.js';

// A worker killed with SIGKILL in the middle of a create, twenty times over: as an OOM kill or a lost
// node would. Workers are child processes composed like `gpuops worker`, with job locks of one second
// so another worker takes a dead one's job over quickly; after each kill the next worker (a warm spare,
// already loaded) starts. Three moments of dying, in turn:
//   sent      the create reached the cloud, which answers only later (held 300 ms): no answer heard;
//   made      the cloud made the machine; the worker may or may not have recorded its id;
//   waiting   the machine is being created and the worker polls it, its message saying "Waiting".
// Each time: no job lost, exactly one machine, and the user's one message ends Done in the true state.

const KILLS = 20;
const CHANNEL = 'C0KILL';
const MOMENTS = ['sent', 'made', 'waiting'] as const;

describe('workers killed with SIGKILL in the middle of creates', () => {
  let rig: Rig;
  let web: Bot;
  let current: BotProcess;
  let spare: Promise<BotProcess>;
  const knobs = {
    BOT_ROLE: 'worker',
    BOT_LOCK_MS: '1000',
    BOT_STALLED_MS: '500',
    BOT_POLL_MS: '50',
    BOT_CONCURRENCY: '2',
    LOG_LEVEL: 'warn',
  };

  /** A warm spare, loading in the background; the last one is still loading when the test ends. */
  const standby = () => {
    const next = rig.spawn({ ...knobs, BOT_WAIT_FOR_GO: '1' });
    next.catch(() => {});
    return next;
  };

  beforeAll(async () => {
    rig = await startRig({ sim: { transitionMs: 600 } });
    [web, current] = await Promise.all([rig.start('web'), rig.spawn(knobs)]);
    spare = standby();
    await rig.catalogue();
  });

  afterAll(async () => {
    await rig?.close();
  });

  it('loses no job, makes no second machine, and every message ends Done in the true state', async () => {
    const started = Date.now();
    const seen: Array<{ name: string; ts: string; moment: string }> = [];
    const workerLines: string[] = [];
    for (let i = 0; i < KILLS; i++) {
      const name = `kill-${i}`;
      const moment = MOMENTS[i % MOMENTS.length]!;
      if (moment === 'sent') {
        rig.sim.control.addFault({ operation: 'createInstance', latencyMs: 300, count: 1 });
      }
      const sent = await slash(rig, web.url, `create ${name} ${TYPE}`, {
        channelId: CHANNEL,
        userId: `U0K${i}`,
      });
      expect(sent.response.status).toBe(200);
      const ts = await messageOf(rig, sent);
      seen.push({ name, ts, moment });

      if (moment === 'sent') {
        await until(
          () => (rig.sim.control.creates().attempts.createInstance?.[name] ?? 0) >= 1,
          `the create of ${name} to reach the cloud`,
          20_000,
        );
      } else if (moment === 'made') {
        await until(
          () => rig.sim.control.createCount('createInstance', name) === 1,
          `${name} to be made`,
          20_000,
        );
      } else {
        await until(
          () => String(rig.slack.message(CHANNEL, ts)?.text).startsWith('Waiting'),
          `${name}'s message to say Waiting`,
          20_000,
        );
      }
      const victim = current;
      victim.child.kill('SIGKILL');
      expect((await victim.exited).signal).toBe('SIGKILL');
      workerLines.push(...victim.lines);
      // The spare takes over; a new spare loads in the background.
      current = await spare;
      await current.go();
      spare = standby();

      const message = await finalOf(rig, CHANNEL, ts, 30_000);
      expect(message.text, `${name} (killed when ${moment})`).toMatch(
        new RegExp(`^Done: .*${name} is running at \\d+\\.\\d+\\.\\d+\\.\\d+`),
      );
      expect(finals(message)).toBe(1);
      expect(rig.sim.control.createCount('createInstance', name)).toBe(1);
    }

    // Nothing left behind, nothing doubled, everything in its true state.
    await until(async () => (await rig.pendingRequests()) === 0, 'the queue to empty', 20_000);
    const instances = rig.sim.control
      .state()
      .projects.flatMap((p) => (p as { instances: Array<{ name: string; state: string }> }).instances);
    for (const { name, ts } of seen) {
      const mine = instances.filter((m) => m.name === name);
      expect(mine, name).toHaveLength(1);
      expect(mine[0]!.state).toBe('running');
      expect(finals(rig.slack.message(CHANNEL, ts)!)).toBe(1);
    }
    expect(rig.slack.channelView(CHANNEL)).toHaveLength(KILLS);
    expect(await leaks(rig, [...web.logLines, ...workerLines, ...current.lines])).toEqual([]);
    const attempts = Object.values(rig.sim.control.creates().attempts.createInstance ?? {}).reduce(
      (a, b) => a + b,
      0,
    );
    console.info(
      `[reliability] worker kills: ${KILLS} SIGKILLs in ${Math.round((Date.now() - started) / 1000)} s; ` +
        `${seen.length} creates, ${attempts} create requests, ${instances.length} machines, all Done once`,
    );
  });
});
