import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { spawnScript } from '../support/gpuops-process.js';
import { channelRequest, finalMessage } from '../support/slash-requests.js';
import { until } from '../support/until.js';

// Requests on one machine take effect in the order they were accepted. A start accepted while an
// earlier stop of the same machine is unfinished (its worker killed and its lock not yet run out, or
// its next attempt waiting out a back-off after a cloud 503) used to run at once; the stop then ran
// after it and answered last, and the machine ended stopped though the person's last request was start.
// Now the start waits, says for what, and runs once the stop has ended.

const CHANNEL = 'C0GPU';
/** The client's timeout: a taken-over stop waits this (plus 1 s) for the dead worker's try. */
const CLOUD_TIMEOUT_MS = 6_000;
/** The cloud holds the doomed worker's stop this long: within the client's timeout. */
const HELD_MS = 4_500;
/** The doomed worker's lock: the start is accepted well within it, while the stop is stalled. */
const DOOMED_LOCK_MS = 4_000;
const TYPE = 'h100-hgx-80gb.1x';
const ADA = { userId: 'U0ADA', userName: 'ada' };
const WAITED = /Waiting for \/gpu stop (\S+) \(job [^)]+\) to finish first\./;

describe('a start accepted while an earlier stop of the same machine is unfinished', () => {
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
  const settledState = (id: string, name: string) =>
    until(`${name} to settle`, async () => {
      const state = await stateOf(id);
      return state === 'starting' || state === 'stopping' ? undefined : state;
    });
  const running = async (name: string) => {
    const made = await stack.cloud.createInstance({ name, type: TYPE });
    await until(`${name} to run`, async () => ((await stateOf(made.id)) === 'running' ? true : undefined));
    return made.id;
  };
  const finals = (ts: string) =>
    stack.slack
      .message(CHANNEL, ts)!
      .history.map((v) => String(v.text))
      .filter((t) => /^(Done|Failed):/.test(t));

  it('waits for a stop whose worker was killed within its lock, then starts the machine', async () => {
    const name = 'order-1';
    const id = await running(name);

    // The stop goes to a worker in a process of its own (the stack's worker pauses): the one to kill.
    const own = stack.bot.parts.requestWorker!;
    const doomed = spawnScript('test/support/worker-entry.ts', {
      ...stack.env(),
      LOCK_MS: String(DOOMED_LOCK_MS),
      STALLED_MS: '500',
      LOG_LEVEL: 'error',
    });
    let resumed = false;
    try {
      await doomed.waitForLog((r) => r.msg === 'worker ready', 60_000);
      await own.pause(true);
      const held = stack.sim.control.addFault({ operation: 'stopInstance', latencyMs: HELD_MS, count: 1 });
      const stopTs = await channelRequest(stack, `stop ${name}`, ADA);
      await until('the stop to reach the cloud', () =>
        stack.sim.control.faults().find((f) => f.id === held.id && f.hits > 0) ? true : undefined,
      );
      doomed.child.kill('SIGKILL');
      expect((await doomed.exited).signal).toBe('SIGKILL');
      await own.resume();
      resumed = true;

      // Ada starts the machine again while the stop is stalled (its dead worker still holds the lock).
      const startTs = await channelRequest(stack, `start ${name}`, ADA);
      const stopped = await finalMessage(stack, stopTs, 'Done', CHANNEL, 40_000);
      expect(String(stopped.text)).toContain(`${name} is stopped`);
      const started = await finalMessage(stack, startTs, 'Done', CHANNEL, 40_000);
      expect(String(started.text), 'the last answer Ada read').toContain(`${name} is running`);
      expect(await settledState(id, name), `Ada's last request was start`).toBe('running');
      // Her start said what it waited for while the stop was unfinished.
      const told = started.history.map((v) => String(v.text)).find((t) => WAITED.test(t));
      expect(told, 'the start said it waits for the stop').toBeDefined();
      expect(told!.match(WAITED)![1]).toBe(name);
      // Each request's message became final once, with the true state.
      expect(finals(stopTs)).toHaveLength(1);
      expect(finals(startTs)).toHaveLength(1);
      await stack.drained();
    } finally {
      await doomed.kill();
      if (!resumed) await own.resume();
    }
  }, 120_000);

  it('waits for a stop that is waiting out its back-off after a cloud 503, then starts the machine', async () => {
    const name = 'order-2';
    const id = await running(name);
    // Two attempts' worth of 503s (the client tries four times an attempt): the stop is still unfinished
    // when the start is accepted after its first failed attempt.
    stack.sim.control.addFault({ operation: 'stopInstance', status: 503, count: 8 });
    const stopTs = await channelRequest(stack, `stop ${name}`, ADA);
    await until('the stop to retry', () =>
      stack.slack
        .message(CHANNEL, stopTs)
        ?.history.some((v) => /Retrying \(attempt 2 of/.test(String(v.text)))
        ? true
        : undefined,
    );
    const startTs = await channelRequest(stack, `start ${name}`, ADA);
    const stopped = await finalMessage(stack, stopTs, 'Done', CHANNEL, 40_000);
    expect(String(stopped.text)).toContain(`${name} is stopped`);
    const started = await finalMessage(stack, startTs, 'Done', CHANNEL, 40_000);
    expect(String(started.text), 'the last answer Ada read').toContain(`${name} is running`);
    expect(await settledState(id, name), `Ada's last request was start`).toBe('running');
    const told = started.history.map((v) => String(v.text)).some((t) => WAITED.test(t));
    expect(told, 'the start said it waits for the stop').toBe(true);
    expect(finals(stopTs)).toHaveLength(1);
    expect(finals(startTs)).toHaveLength(1);
    await stack.drained();
  }, 120_000);
});
