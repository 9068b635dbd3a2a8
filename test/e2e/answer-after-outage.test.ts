import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningBot, startBot } from '../../src/app/start-bot.js';
import { parseConfig } from '../../src/config.js';
import { createLogger } from '../../src/log/logger.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { OPEN_TEST_POLICY } from '../support/guardrails.js';
import { until } from '../support/until.js';

// A Redis crash under a job's final answer (test/reliability/redis-restart.test.ts) left acknowledged
// creates showing "Queued" for ever, the machine made: the answer is recorded before it is shown, and
// Redis died between the two. The answer must still reach the request's one message, and the job
// must not act again.

const CHANNEL = 'C0GPU';
const TYPE = 'h100-hgx-80gb.1x';
const FINAL = /^(Done|Failed):/;

/** The request's job, as the listener queued it (its reference stored and the job released). */
async function queuedJob(stack: BotStack, name: string): Promise<{ id: string; ts: string }> {
  return until(`the job of ${name} to be released with its message`, async () => {
    const jobs = await stack.queue.getJobs(['waiting']);
    const job = jobs.find((j) => j && JSON.stringify(j.data).includes(`"${name}"`));
    const ref = job && (await stack.store.jobMessage(job.id!));
    return job && ref ? { id: job.id!, ts: ref.ts } : undefined;
  });
}

describe('a final answer recorded when Redis died, never shown', () => {
  let stack: BotStack;
  let worker: RunningBot | undefined;
  beforeAll(async () => {
    // The listener alone: the test sets the job's record as the dead attempt left it, then starts a worker.
    stack = await startBotStack({ shape: 'B', workers: 0 });
  });
  afterEach(async () => {
    await worker?.stop();
    worker = undefined;
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('is shown by the next attempt, which does not create the machine again', async () => {
    const since = stack.slack.mark();
    expect((await stack.command(`create told-1 ${TYPE}`)).response.status).toBe(200);
    const job = await queuedJob(stack, 'told-1');
    expect(stack.slack.message(CHANNEL, job.ts)!.text).toMatch(/^Queued: /);

    // What the attempt wrote before Redis died under it: its record says done (the write was applied,
    // its reply lost), nothing says the answer was shown.
    const detail = 'told-1 is running at 10.0.0.9.';
    await stack.store.updateJob(job.id, { state: 'done', detail });

    worker = await startBot(parseConfig({ ...stack.env(), ROLE: 'worker' }, 'bot'), {
      role: 'worker',
      log: createLogger({ level: 'silent' }),
      host: '127.0.0.1',
      policy: OPEN_TEST_POLICY,
      shutdownGraceMs: 2_000,
    });
    await stack.slack.waitFor(
      'chat.update',
      (c) => c.body.ts === job.ts && FINAL.test(String(c.body.text)),
      20_000,
      since,
    );
    const message = stack.slack.message(CHANNEL, job.ts)!;
    expect(message.text).toBe(`Done: /gpu create told-1 ${TYPE} — ${detail}`);
    expect(message.history.filter((v) => FINAL.test(String(v.text)))).toHaveLength(1);
    expect(stack.slack.channelView(CHANNEL), 'one message for the request').toHaveLength(1);
    expect(stack.sim.control.createCount('createInstance', 'told-1'), 'creates sent again').toBe(0);
    await stack.drained();
    expect((await stack.store.job(job.id))?.answered, 'the answer recorded as shown').toBe(true);
  });
});

describe('the reference to a request\u2019s message, unreadable at the end of the job', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B', transitionMs: 100 });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('is not needed: the answer goes to the message the job started with', async () => {
    // The create is held at the cloud while the reference goes away, as it would when Redis dies just
    // before the answer (gone here, so that the job's read finds nothing instead of failing).
    stack.sim.control.addFault({ operation: 'createInstance', latencyMs: 1_000, count: 1 });
    const since = stack.slack.mark();
    expect((await stack.command(`create kept-1 ${TYPE}`)).response.status).toBe(200);
    const posted = await stack.slack.waitFor('chat.postMessage', () => true, 5_000, since);
    const ts = String((posted.response as { ts: string }).ts);
    await until('the create to reach the cloud', () =>
      (stack.sim.control.creates().attempts.createInstance?.['kept-1'] ?? 0) >= 1 ? true : undefined,
    );
    const [job] = (await stack.queue.getJobs(['active'])).filter((j) =>
      JSON.stringify(j.data).includes('kept-1'),
    );
    expect(await stack.redis.del(`${stack.storePrefix}:job:${job!.id}:message`)).toBe(1);

    await stack.slack.waitFor(
      'chat.update',
      (c) => c.body.ts === ts && FINAL.test(String(c.body.text)),
      20_000,
      since,
    );
    expect(stack.slack.message(CHANNEL, ts)!.text).toMatch(
      /^Done: .*kept-1 is running at \d+\.\d+\.\d+\.\d+/,
    );
    expect(
      stack.slack.channelView(CHANNEL).map((m) => m.text),
      'one message for the request',
    ).toHaveLength(1);
  });
});
