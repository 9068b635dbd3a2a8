import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { type GpuopsProcess, spawnScript, until } from '../support/gpuops-process.js';

// A worker killed (SIGKILL, as an OOM kill or a lost node would) after its create reached the cloud
// but before it heard the answer. Another worker takes the job over once the lock expires, finds the
// machine the first one made, and reports the true state: one machine, one message that ends Done.

const CHANNEL = 'C0GPU';
const TYPE = 'h100-hgx-80gb.1x';
/** How long the simulator holds the create in the take-over test. */
const HOLD_MS = 8_000;

describe('a worker killed mid-create', () => {
  let stack: BotStack;
  const workers: GpuopsProcess[] = [];

  beforeAll(async () => {
    // The listener runs here; the workers run in child processes.
    stack = await startBotStack({ shape: 'B', workers: 0, transitionMs: 300 });
  });

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.kill()));
    await stack?.close();
  });

  const startWorker = async (env: Record<string, string> = {}) => {
    const worker = spawnScript('test/support/worker-entry.ts', {
      ...stack.env(),
      LOG_LEVEL: 'warn',
      LOCK_MS: '1000',
      STALLED_MS: '500',
      ...env,
    });
    workers.push(worker);
    await worker.waitForLog((r) => r.msg === 'worker ready', 30_000);
    return worker;
  };

  it('makes exactly one machine, and the message ends in the true state', async () => {
    // The create reaches the simulator, which makes the machine only after 1.5 s: the worker dies
    // in between, with the request sent and no answer.
    stack.sim.control.addFault({ operation: 'createInstance', latencyMs: 1_500, count: 1 });
    const first = await startWorker();

    const since = stack.slack.mark();
    const { response } = await stack.command(`create crash-1 ${TYPE}`);
    expect(response.status).toBe(200);
    const posted = await stack.slack.waitFor('chat.postMessage', () => true, 5_000, since);
    const ts = String((posted.response as { ts: string }).ts);

    await until(
      () => (stack.sim.control.creates().attempts.createInstance?.['crash-1'] ?? 0) >= 1,
      'the create request to reach the simulator',
    );
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    await until(
      () => stack.sim.control.createCount('createInstance', 'crash-1') === 1,
      'the simulator to make the machine',
    );
    expect(stack.slack.message(CHANNEL, ts)!.text).not.toMatch(/^(Done|Failed):/);

    // A second worker: it finds the job whose lock expired, and the machine the first one made.
    const second = await startWorker();
    await stack.slack.waitFor(
      'chat.update',
      (c) => c.body.ts === ts && /^(Done|Failed):/.test(String(c.body.text)),
      20_000,
      since,
    );
    const message = stack.slack.message(CHANNEL, ts)!;
    expect(message.text).toMatch(/^Done: .*crash-1 is running at \d+\.\d+\.\d+\.\d+/);
    expect(message.history.filter((v) => /^(Done|Failed):/.test(String(v.text)))).toHaveLength(1);
    expect(stack.sim.control.createCount('createInstance', 'crash-1')).toBe(1);
    const machines = (await stack.cloud.listInstances()).filter((i) => i.name === 'crash-1');
    expect(machines).toHaveLength(1);
    expect(machines[0]!.state).toBe('running');
    expect(stack.slack.callsTo('chat.postMessage')).toHaveLength(1);
    await stack.drained();

    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
  }, 60_000);

  it('sends a create once even when the cloud still holds it as another worker takes over', async () => {
    // The cloud holds the create for 8 s, far longer than the 1 s job lock: the second worker takes the
    // job over while the first request is still under way and finds no machine yet. It must wait
    // until the client would have given up on that request (CLOUD_TIMEOUT_MS from the recorded send),
    // look again, and adopt the machine: a second create would be a second paid machine.
    const env = { CLOUD_TIMEOUT_MS: '10000' };
    stack.sim.control.addFault({ operation: 'createInstance', latencyMs: HOLD_MS, count: 1 });
    const first = await startWorker(env);
    const since = stack.slack.mark();
    const { response } = await stack.command(`create held-1 ${TYPE}`);
    expect(response.status).toBe(200);
    const posted = await stack.slack.waitFor('chat.postMessage', () => true, 5_000, since);
    const ts = String((posted.response as { ts: string }).ts);
    await until(
      () => (stack.sim.control.creates().attempts.createInstance?.['held-1'] ?? 0) >= 1,
      'the create request to reach the simulator',
    );
    const heldUntil = Date.now() + HOLD_MS;
    first.child.kill('SIGKILL');
    await first.exited;
    // At once, while the simulator still holds the first create.
    const second = await startWorker(env);
    expect(stack.sim.control.createCount('createInstance', 'held-1')).toBe(0);

    await stack.slack.waitFor(
      'chat.update',
      (c) => c.body.ts === ts && /^(Done|Failed):/.test(String(c.body.text)),
      30_000,
      since,
    );
    // The simulator serves the held request when its hold ends, whatever became of the worker that sent
    // it (as a cloud does): count the machines only after that.
    await sleep(Math.max(0, heldUntil + 500 - Date.now()));
    const message = stack.slack.message(CHANNEL, ts)!;
    expect(message.text, 'the request should end Done on the one machine').toMatch(
      /^Done: .*held-1 is running/,
    );
    const machines = (await stack.cloud.listInstances()).filter((i) => i.name === 'held-1');
    expect(
      machines.map((m) => m.name),
      'one machine, not one per attempt',
    ).toEqual(['held-1']);
    expect(stack.sim.control.createCount('createInstance', 'held-1')).toBe(1);
    await stack.drained();
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
  }, 60_000);
});
