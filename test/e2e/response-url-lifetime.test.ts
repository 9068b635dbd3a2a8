import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCommand } from '../../src/commands/parse-command.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { until } from '../support/gpuops-process.js';
import { CHANNEL, privateAnswer } from './answers.js';

// A response_url lets whoever holds it post into the conversation for 30 minutes. A job keeps it in
// its data only while it can be used: it is dropped once the job has answered (BullMQ keeps finished
// jobs for days), and a job that starts after the 30 minutes neither keeps nor uses it.

describe("a request's response_url", () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B' });
    await stack.cloud.createInstance({ name: 'url-1', type: 'cpu.16x' });
  });
  afterAll(async () => {
    await stack?.close();
  });

  /** What Redis holds of the job: its whole hash, as anyone reading Redis would see it. */
  const jobHash = async (id: string) =>
    JSON.stringify(await stack.redis.hgetall(`bull:${stack.queue.name}:${id}`));

  it('leaves the job once the job has answered on it', async () => {
    const post = await privateAnswer(stack, 'ls');
    expect(post.blocksJson).toContain('url-1');
    const [record] = await stack.store.recentJobs(CHANNEL, 1);
    const id = record!.id;
    const job = await until(async () => {
      const j = await stack.queue.getJob(id);
      return j && (await j.isCompleted()) && j.data.ctx.responseUrl === undefined ? j : undefined;
    }, 'the finished ls job without its response_url');
    expect(job.data.ctx.userId).toBe('U0ADA');
    expect(await jobHash(id)).not.toContain('/commands/T0FAKE/');
  });

  it('is neither used nor kept by a job that starts after its 30 minutes', async () => {
    const parsed = parseCommand('ls');
    if (!parsed.ok) throw new Error('ls does not parse');
    const responseUrl = stack.responses.newUrl();
    const id = 'late-ls';
    await stack.queue.add(
      parsed.command.kind,
      {
        v: 1,
        command: parsed.command,
        ctx: {
          teamId: 'T0FAKE',
          channelId: CHANNEL,
          userId: 'U0ADA',
          responseUrl,
          requestedAt: Date.now() - 31 * 60_000,
        },
      },
      { jobId: id },
    );
    // The answer goes to the requester another way (an ephemeral in the channel)…
    const ephemeral = await stack.slack.waitFor(
      'chat.postEphemeral',
      (c) => c.body.user === 'U0ADA' && JSON.stringify(c.body.blocks).includes('url-1'),
      15_000,
    );
    expect(ephemeral.body.channel).toBe(CHANNEL);
    await until(
      async () => (await (await stack.queue.getJob(id))?.isCompleted()) || undefined,
      'late-ls to end',
    );
    // …never on the expired URL, which the job no longer holds.
    expect(stack.responses.postsTo(responseUrl)).toEqual([]);
    expect(await jobHash(id)).not.toContain(responseUrl);
  });
});
