import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { spawnScript } from '../support/gpuops-process.js';
import { channelRequest, finalMessage } from '../support/slash-requests.js';
import { until } from '../support/until.js';

// A worker killed (SIGKILL) while the cloud holds its stop: the call was sent, no answer was heard, and
// the cloud carries it out later, whatever became of the process that sent it. Another worker takes the
// job over once its lock runs out and finds the machine still running, so it stops it itself. If that
// attempt answers Done at once, the person starts the machine again, and the dead worker's stop, still
// held, lands after the start: the last answer says running, the machine is stopped (the model test's
// seed 898399906, docs/testing.md). The attempt that takes the job over must not answer before any try
// of the dead attempt can no longer land.

const CHANNEL = 'C0GPU';
/** The client's timeout: the bot promises to wait out a try the cloud holds up to this long. */
const CLOUD_TIMEOUT_MS = 6_000;
/** Within the client's timeout, and far past the take-over (1 s lock, stalled check every 500 ms). */
const HELD_MS = 4_500;
const TYPE = 'h100-hgx-80gb.1x';

describe('a stop whose worker was killed with the call held by the cloud, then a start', () => {
  let stack: BotStack;

  beforeAll(async () => {
    stack = await startBotStack({
      shape: 'B',
      transitionMs: 100,
      stalledIntervalMs: 500,
      env: { CLOUD_TIMEOUT_MS: String(CLOUD_TIMEOUT_MS) },
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const stateOf = async (id: string) => (await stack.cloud.getInstance({ id })).state;

  it('ends as the last request asked, and each requester was told the truth', async () => {
    const name = 'killed-1';
    const made = await stack.cloud.createInstance({ name, type: TYPE });
    await until(`${name} to run`, async () => ((await stateOf(made.id)) === 'running' ? true : undefined));

    // The stop goes to a worker in a process of its own (the stack's worker pauses): the one to kill.
    const own = stack.bot.parts.requestWorker!;
    const doomed = spawnScript('test/support/worker-entry.ts', {
      ...stack.env(),
      LOCK_MS: '1000',
      STALLED_MS: '500',
      LOG_LEVEL: 'error',
    });
    let resumed = false;
    try {
      await doomed.waitForLog((r) => r.msg === 'worker ready', 60_000);
      await own.pause(true);
      const held = stack.sim.control.addFault({ operation: 'stopInstance', latencyMs: HELD_MS, count: 1 });
      const stopTs = await channelRequest(stack, `stop ${name}`, { userId: 'U0ADA', userName: 'ada' });
      const arrived = await until('the stop to reach the cloud', () =>
        stack.sim.control.faults().find((f) => f.id === held.id && f.hits > 0) ? Date.now() : undefined,
      );
      doomed.child.kill('SIGKILL');
      expect((await doomed.exited).signal).toBe('SIGKILL');
      await own.resume();
      resumed = true;

      // The stack's worker takes the stop over and answers it; then Ada starts the machine again.
      const stopped = await finalMessage(stack, stopTs, 'Done', CHANNEL, 30_000);
      expect(String(stopped.text)).toContain(`${name} is stopped`);
      // It said why it took longer: it waited for the dead worker's stop before answering.
      expect(stopped.history.map((v) => String(v.text)).join('\n')).toMatch(
        /may still carry it out; waiting/,
      );
      const startTs = await channelRequest(stack, `start ${name}`, { userId: 'U0ADA', userName: 'ada' });
      const started = await finalMessage(stack, startTs, 'Done', CHANNEL, 30_000);
      expect(String(started.text), 'the last answer Ada read').toContain(`${name} is running`);

      // The held stop is carried out HELD_MS after it arrived: only then does the state say who won.
      await until(
        'the held stop to have been carried out',
        () => (Date.now() > arrived + HELD_MS + 500 ? true : undefined),
        HELD_MS + 5_000,
      );
      const final = await until(`${name} to settle`, async () => {
        const state = await stateOf(made.id);
        return state === 'starting' || state === 'stopping' ? undefined : state;
      });
      expect(final, `Ada's last request was start, and its answer said ${name} is running`).toBe('running');
      // Each request's message became final once.
      for (const ts of [stopTs, startTs]) {
        const history = stack.slack.message(CHANNEL, ts)!.history.map((v) => String(v.text));
        expect(history.filter((t) => /^(Done|Failed):/.test(t))).toHaveLength(1);
      }
      await stack.drained();
    } finally {
      await doomed.kill();
      if (!resumed) await own.resume();
    }
  }, 90_000);
});
