import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TIMING } from '../../src/commands/kit/handler-deps.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';

// A job's progress edits wait out a quiet period (production's 1 s): a job that ends sooner goes from
// "Queued" straight to its answer in two Slack calls; a longer one shows its latest step, then the end.
// The job's record (what `/gpu jobs` lists) follows the message.

const CHANNEL = 'C0GPU';
const TYPE = 'h100-hgx-80gb.1x';

async function settledPhases(stack: BotStack, text: string) {
  const since = stack.slack.mark();
  const { response } = await stack.command(text);
  expect(response.status).toBe(200);
  const posted = await stack.slack.waitFor('chat.postMessage', () => true, 5_000, since);
  const ts = String((posted.response as { ts: string }).ts);
  await stack.slack.waitFor(
    'chat.update',
    (c) => c.body.ts === ts && /^(Done|Failed):/.test(String(c.body.text)),
    15_000,
    since,
  );
  const message = stack.slack.message(CHANNEL, ts)!;
  return { message, phases: message.history.map((v) => String(v.text).split(':')[0]) };
}

describe('a job that ends within the quiet period', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({
      shape: 'B',
      transitionMs: 0,
      progressQuietMs: DEFAULT_TIMING.progressQuietMs,
    });
    await settledPhases(stack, `create quick-1 ${TYPE}`);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('goes from Queued to Done with no progress edit between, and keeps its answer', async () => {
    const { message, phases } = await settledPhases(stack, 'stop quick-1');
    expect(phases).toEqual(['Queued', 'Done']);
    expect(message.text).toContain('quick-1 is stopped');
    expect((await stack.store.recentJobs(CHANNEL, 1))[0]).toMatchObject({ kind: 'stop', state: 'done' });
    expect((await stack.cloud.listInstances()).find((i) => i.name === 'quick-1')?.state).toBe('stopped');
  });
});

describe('a job that takes longer than the quiet period', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B', transitionMs: 2_500, progressQuietMs: 300 });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('shows where it stands while the cloud works, then its answer', async () => {
    // What `/gpu jobs` lists follows the message: a state of its own once the quiet period is over.
    const states = new Set<string>();
    let watching = true;
    const watch = (async () => {
      while (watching) {
        for (const job of await stack.store.recentJobs(CHANNEL, 5)) states.add(job.state);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const { phases } = await settledPhases(stack, `create slow-1 ${TYPE}`);
    watching = false;
    await watch;
    expect(phases[0]).toBe('Queued');
    expect(phases.at(-1)).toBe('Done');
    expect(phases.slice(1, -1).some((p) => p === 'Working' || p === 'Waiting')).toBe(true);
    expect(
      [...states].some((s) => s === 'working' || s === 'waiting'),
      [...states].join(', '),
    ).toBe(true);
    expect((await stack.store.recentJobs(CHANNEL, 1))[0]?.state).toBe('done');
  });
});
