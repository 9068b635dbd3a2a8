import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { until } from '../support/until.js';

const CHANNEL = 'C0GPU';
const TYPE = 'h100-hgx-80gb.1x';

// A job that has given its final answer never acts again, whatever BullMQ does with it: a worker that
// lost its lock in a Redis outage longer than the lock, or a finished job run a second time, must not
// repeat a change the person was already told about.
describe('a job run again after its answer', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B' });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const doneMessage = async (text: string, since: number) => {
    await stack.command(text);
    const done = await stack.slack.waitFor(
      'chat.update',
      (c) => String(c.body.text).startsWith(`Done: /gpu ${text}`),
      20_000,
      since,
    );
    return String(done.body.ts);
  };

  it('leaves alone a machine someone started after the stop was answered', async () => {
    await doneMessage(`create again-1 ${TYPE}`, stack.slack.mark());
    await doneMessage('stop again-1', stack.slack.mark());
    // The answer is edited in before BullMQ marks the job completed.
    const stopJob = await until('the stop job to be completed', async () =>
      (await stack.queue.getCompleted()).find(
        (j) => j.name === 'stop' && JSON.stringify(j.data).includes('again-1'),
      ),
    );
    const finishedOn = stopJob.finishedOn;

    // Someone starts the machine again, by hand.
    const [machine] = (await stack.cloud.listInstances()).filter((i) => i.name === 'again-1');
    await stack.cloud.startInstance({ id: machine!.id });
    await until('the machine to run again', async () =>
      (await stack.cloud.getInstance({ id: machine!.id })).state === 'running' ? true : undefined,
    );

    // BullMQ runs the answered stop job a second time (as after a lost lock).
    const since = stack.slack.mark();
    await stopJob.retry('completed');
    await until('the job to finish its second run', async () => {
      const job = await stack.queue.getJob(stopJob.id!);
      return (await job?.getState()) === 'completed' && job!.finishedOn !== finishedOn ? true : undefined;
    });

    const state = (await stack.cloud.getInstance({ id: machine!.id })).state;
    expect(state, 'the stop the person was answered about must not run again').toBe('running');
    const edits = stack.slack.callsTo('chat.update').filter((c) => c.index >= since);
    expect(
      edits.map((c) => String(c.body.text)),
      'no new progress on the answered request',
    ).toEqual([]);
    expect(
      stack.slack.channelView(CHANNEL).filter((m) => String(m.text).startsWith('Done: /gpu stop again-1')),
    ).toHaveLength(1);
  });
});
