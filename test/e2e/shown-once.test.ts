import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningBot, startBot } from '../../src/app/start-bot.js';
import { parseConfig } from '../../src/config.js';
import { createLogger } from '../../src/log/logger.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { OPEN_TEST_POLICY } from '../support/guardrails.js';
import { until } from '../support/until.js';
import { runStep } from '../support/workflow-steps.js';

// Two crashes docs/reliability.md used to list as known holes: a job's process dying after its answer
// was recorded (and shown) but before the rest was marked, followed by BullMQ running the job again.
// The requester sees one answer, whole; a workflow step waiting for the job is completed.

const CHANNEL = 'C0GPU';
const TYPE = 'h100-hgx-80gb.1x';
const DONE = /^Done:/;

describe('an answer whose "shown" mark and BullMQ completion were both lost', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B' });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('is shown again exactly as it was, its result blocks included, and nothing acts again', async () => {
    const since = stack.slack.mark();
    await stack.command(`create twice-shown-1 ${TYPE}`);
    const done = await stack.slack.waitFor(
      'chat.update',
      (c) => DONE.test(String(c.body.text)) && String(c.body.text).includes('twice-shown-1'),
      20_000,
      since,
    );
    const ts = String(done.body.ts);
    const job = await until('the create job to be completed', async () =>
      (await stack.queue.getCompleted()).find((j) => JSON.stringify(j.data).includes('twice-shown-1')),
    );
    const first = stack.slack.message(CHANNEL, ts)!.history.find((v) => DONE.test(String(v.text)))!;
    // A crash between showing the answer and marking it shown: the record holds the answer as the
    // attempt recorded it before showing it (what the message shows), not marked shown.
    const record = (await stack.store.job(job.id!))!;
    expect(record.answered, 'the first attempt marked its answer shown').toBe(true);
    await stack.store.updateJob(job.id!, {
      state: 'done',
      ...(record.detail ? { detail: record.detail } : {}),
      answer: { text: String(first.text), blocks: first.blocks as unknown[] },
    });
    // And BullMQ's completion was lost, so the job runs again.
    const again = stack.slack.mark();
    await job.retry('completed');
    await until('the second attempt to mark the answer shown', async () =>
      (await stack.store.job(job.id!))?.answered ? true : undefined,
    );
    const versions = stack.slack.message(CHANNEL, ts)!.history;
    const answers = versions.filter((v) => DONE.test(String(v.text)));
    // The same message edited to the same answer: the requester reads one answer, with its result.
    for (const v of answers) {
      expect(v.text).toBe(first.text);
      expect(v.blocks).toEqual(first.blocks);
    }
    expect(versions.at(-1)!.blocks, 'the message ends with the whole answer').toEqual(first.blocks);
    const posted = stack.slack.callsTo('chat.postMessage').filter((c) => c.index >= again);
    expect(
      posted.filter((c) => c.body.channel === CHANNEL),
      'no second message',
    ).toHaveLength(0);
    // It does not act again: one machine.
    expect(stack.sim.control.createCount('createInstance', 'twice-shown-1')).toBe(1);
    // Once shown and marked, the record no longer keeps the rendered answer.
    expect((await stack.store.job(job.id!))?.answer).toBeUndefined();
  });
});

describe('a workflow step whose process died after recording its outcome', () => {
  let stack: BotStack;
  let worker: RunningBot | undefined;
  beforeAll(async () => {
    // The listener alone: the test leaves the job as a dead worker left it, then starts a worker.
    stack = await startBotStack({ shape: 'B', workers: 0 });
  });
  afterAll(async () => {
    await worker?.stop();
    await stack?.close();
  });

  it('is completed from the recorded outcome by the next attempt, once', async () => {
    const made = await stack.cloud.createInstance({ name: 'wf-hole-1', type: TYPE });
    await until('the machine to run', async () =>
      (await stack.cloud.getInstance({ id: made.id })).state === 'running' ? true : undefined,
    );
    const run = await runStep(stack, 'U0ADA', 'stop_instance', { instance: 'wf-hole-1' });
    expect(run.response.status).toBe(200);
    const job = await until("the step's job to be queued", async () =>
      (await stack.queue.getJobs(['waiting', 'delayed'])).find(
        (j) => j && JSON.stringify(j.data).includes('wf-hole-1'),
      ),
    );
    // What the dead worker left: the outcome recorded and shown, functions.completeSuccess never sent.
    const outputs = { instance: 'wf-hole-1', instanceId: made.id, state: 'stopped' };
    await stack.store.updateJob(job.id!, { state: 'done', detail: 'wf-hole-1 is stopped.', outputs });
    await stack.store.updateJob(job.id!, { state: 'done', answered: true });
    const since = stack.slack.mark();
    worker = await startBot(parseConfig({ ...stack.env(), ROLE: 'worker' }, 'bot'), {
      role: 'worker',
      log: createLogger({ level: 'silent' }),
      host: '127.0.0.1',
      policy: OPEN_TEST_POLICY,
      shutdownGraceMs: 2_000,
    });
    const ended = await run.ended(20_000);
    expect(ended).toEqual({
      state: 'completed',
      outputs: { instance_name: 'wf-hole-1', instance_id: made.id, state: 'stopped' },
    });
    await until('the job to end', async () =>
      (await (await stack.queue.getJob(job.id!))?.getState()) === 'completed' ? true : undefined,
    );
    // Nothing acted again: the machine still runs (the recorded stop is the answer), and the step's
    // completion is recorded, so a further attempt leaves it alone.
    expect((await stack.cloud.getInstance({ id: made.id })).state).toBe('running');
    expect((await stack.store.job(job.id!))?.stepDone).toBe(true);
    await (await stack.queue.getJob(job.id!))!.retry('completed');
    await until('the job to end again', async () =>
      (await (await stack.queue.getJob(job.id!))?.getState()) === 'completed' ? true : undefined,
    );
    const completions = stack.slack.calls.filter(
      (c) => c.index >= since && c.method.startsWith('functions.complete'),
    );
    expect(completions, 'the step completed once').toHaveLength(1);
  });
});
