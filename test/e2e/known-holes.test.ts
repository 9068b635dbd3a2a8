import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningBot, startBot } from '../../src/app/start-bot.js';
import { parseConfig } from '../../src/config.js';
import { createLogger } from '../../src/log/logger.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { OPEN_TEST_POLICY } from '../support/guardrails.js';
import { until } from '../support/until.js';
import { runStep } from '../support/workflow-steps.js';

// Holes docs/reliability.md lists as open ("Known holes"), pinned by what they do today: when one is
// closed, its test here fails and moves to the test of the fix.

const CHANNEL = 'C0GPU';
const TYPE = 'h100-hgx-80gb.1x';
const DONE = /^Done:/;

describe('known holes', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B' });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('shows an answer a second time, its sentence only, when its "shown" mark and its completion were both lost', async () => {
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
    // A crash between showing the answer and marking it shown: the record says done, not shown.
    const record = (await stack.store.job(job.id!))!;
    await stack.store.updateJob(job.id!, {
      state: 'done',
      ...(record.detail ? { detail: record.detail } : {}),
    });
    // And BullMQ's completion was lost, so the job runs again.
    await job.retry('completed');
    const shown = await until('the answer to be shown again', () => {
      const versions = stack.slack.message(CHANNEL, ts)?.history.filter((v) => DONE.test(String(v.text)));
      return versions && versions.length >= 2 ? versions : undefined;
    });
    expect(shown, 'the same answer, shown twice (the hole)').toHaveLength(2);
    expect(shown[1]!.text).toBe(shown[0]!.text);
    // The second showing has the recorded sentence only, without the result's blocks.
    expect(JSON.stringify(shown[1]!.blocks).length).toBeLessThan(JSON.stringify(shown[0]!.blocks).length);
    // It does not act again: one machine.
    expect(stack.sim.control.createCount('createInstance', 'twice-shown-1')).toBe(1);
  });
});

describe('known holes: a workflow step', () => {
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

  it('stays running when the process that recorded its outcome died before completing it', async () => {
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
    await stack.store.updateJob(job.id!, { state: 'done', detail: 'wf-hole-1 is stopped.', answered: true });
    worker = await startBot(parseConfig({ ...stack.env(), ROLE: 'worker' }, 'bot'), {
      role: 'worker',
      log: createLogger({ level: 'silent' }),
      host: '127.0.0.1',
      policy: OPEN_TEST_POLICY,
      shutdownGraceMs: 2_000,
    });
    await until('the job to end', async () =>
      (await (await stack.queue.getJob(job.id!))?.getState()) === 'completed' ? true : undefined,
    );
    // The hole: the job ends as answered, and nothing completes the step; Slack times it out later.
    expect(stack.slack.functionRuns.runs.get(run.executionId)?.state).toBe('running');
  });
});
