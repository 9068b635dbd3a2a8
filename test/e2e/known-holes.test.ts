import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { until } from '../support/until.js';

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
