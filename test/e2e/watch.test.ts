import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredMessage } from '../../src/devkit/fake-slack-api.js';
import { createOutbox } from '../../src/store/watch-outbox.js';
import { createSnapshotStore } from '../../src/store/watch-snapshots.js';
import { type PollOutcome, pollProject } from '../../src/watch/poll-project.js';
import { addWatchJob } from '../../src/watch/watch-queue.js';
import { fanOutPolls } from '../../src/watch/watch-tick.js';
import type { BotStack } from '../support/bot-stack.js';
import { startBotStack } from '../support/bot-stack.js';
import { until } from '../support/until.js';
import { CHANNEL, expectCleanSlack, listenerAnswer } from './answers.js';
import { primeCatalog } from './guardrails-kit.js';

// `/gpu watch` on the simulator: machines started, stopped and deleted "from elsewhere" (the cloud
// client, not the bot) show up in the watching channel as one message per machine, edited in place,
// with a thread reply for each transition — once, however many watcher replicas run, and in order
// through Slack's rate limit. A look of many changes reads as one summary with every change in its thread.

/** Polls the fake Slack until the channel shows a message that `match` picks (no fixed sleeps). */
async function messageWhere(
  stack: BotStack,
  match: (m: StoredMessage) => boolean,
  what: string,
  timeoutMs = 15_000,
): Promise<StoredMessage> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = stack.slack.channelView(CHANNEL).find(match);
    if (found) return found;
    if (Date.now() > deadline) {
      const seen = stack.slack.channelView(CHANNEL).map((m) => m.text);
      throw new Error(`timed out waiting for ${what}; the channel shows: ${JSON.stringify(seen)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const messagesOf = (stack: BotStack, name: string) =>
  stack.slack.channelView(CHANNEL).filter((m) => String(m.text).startsWith(`Instance ${name}:`));

/** Waits until the first look of the watch recorded its baseline. */
async function baseline(stack: BotStack): Promise<void> {
  const snapshots = createSnapshotStore(stack.store);
  await until('the baseline', async () =>
    (await snapshots.read(stack.sim.info.projectId)).version > 0 ? true : undefined,
  );
}

/** Waits until every outbox is sent. */
async function delivered(stack: BotStack, target = CHANNEL): Promise<void> {
  const outbox = createOutbox(stack.store);
  await until('the outbox to empty', async () => ((await outbox.pending(target)) === 0 ? true : undefined));
}

async function instanceState(stack: BotStack, id: string, state: string): Promise<void> {
  await until(`instance ${id} ${state}`, async () => {
    const all = await stack.cloud.listInstances();
    const found = all.find((i) => i.id === id);
    return (state === 'gone' ? !found : found?.state === state) ? true : undefined;
  });
}

describe.each(['A', 'B', 'C'] as const)('/gpu watch, shape %s', (shape) => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape, watch: { replicas: 2, pollEveryMs: 150 } });
    // Already there before the watch starts: part of the baseline, never announced.
    const before = await stack.cloud.createInstance({ name: 'old-1', type: 'cpu.16x' });
    await instanceState(stack, before.id, 'running');
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('says the channel watches nothing, then follows its project, recording a baseline without posting', async () => {
    expect(await listenerAnswer(stack, 'watch')).toContain('This channel watches nothing');
    const on = await listenerAnswer(stack, 'watch on');
    expect(on).toContain(`This channel now watches project \`${stack.sim.info.projectId}\``);
    expect(on).toContain('The first look only records how things are');
    await baseline(stack);
    expect(await listenerAnswer(stack, 'watch')).toContain('This channel watches project');
    expect(stack.slack.channelView(CHANNEL)).toEqual([]);
  });

  it('shows start, stop and delete done elsewhere as one edited message with a reply per transition', async () => {
    const created = await stack.cloud.createInstance({ name: 'ext-1', type: 'h100-hgx-80gb.1x' });
    const message = await messageWhere(
      stack,
      (m) => /^Instance ext-1: running · \d+\.\d+\.\d+\.\d+$/.test(String(m.text)),
      'ext-1 running',
    );
    await stack.cloud.stopInstance({ id: created.id });
    await messageWhere(
      stack,
      (m) => m.ts === message.ts && String(m.text).includes(': stopped'),
      'ext-1 stopped',
    );
    await stack.cloud.startInstance({ id: created.id });
    await messageWhere(
      stack,
      (m) => m.ts === message.ts && /: running · /.test(String(m.text)),
      'ext-1 again',
    );
    await stack.cloud.deleteInstance({ id: created.id });
    await messageWhere(
      stack,
      (m) => m.ts === message.ts && String(m.text).endsWith(': deleted'),
      'ext-1 gone',
    );
    await delivered(stack);

    // One message for the machine, edited in place; one thread reply for each edit.
    expect(messagesOf(stack, 'ext-1')).toHaveLength(1);
    const replies = stack.slack.thread(CHANNEL, message.ts).map((m) => String(m.text));
    expect(replies).toHaveLength(message.history.length);
    expect(replies[0]).toMatch(/^:sparkles: Appeared: /);
    expect(replies.some((r) => r.includes('→ `stopped`'))).toBe(true);
    expect(
      replies.some((r) => r.includes('`stopped` → `starting`') || r.includes('`stopped` → `running`')),
    ).toBe(true);
    expect(replies.at(-1)).toMatch(/^:wastebasket: Deleted \(last seen /);
    expect(JSON.stringify(message.blocks)).toContain('*ext-1* · deleted (was ');
    // The machine that was there before the watch never got a message.
    expect(messagesOf(stack, 'old-1')).toEqual([]);
    expectCleanSlack(stack);
  });

  it('stops posting once the channel stops watching', async () => {
    expect(await listenerAnswer(stack, 'watch off')).toContain('This channel stopped watching project');
    const posted = stack.slack.channelView(CHANNEL).length;
    const quiet = await stack.cloud.createInstance({ name: 'quiet-1', type: 'cpu.16x' });
    await instanceState(stack, quiet.id, 'running');
    // A look now finds nobody watching and posts nothing.
    const outcome = await pollProject(
      stack.watch!.deps,
      stack.sim.info.projectId,
      new AbortController().signal,
    );
    expect(outcome.status).toBe('skipped');
    expect(stack.slack.channelView(CHANNEL)).toHaveLength(posted);
  });
});

describe('/gpu watch with node pools (shape B)', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B', watch: { pollEveryMs: 150 } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('follows a Kubernetes cluster and its node pool: appears, then its removal', async () => {
    await listenerAnswer(stack, 'watch on');
    await baseline(stack);
    const cluster = await stack.cloud.createK8sCluster({ name: 'prod', version: 'v1.31' });
    const pool = await stack.cloud.createK8sNodePool({
      clusterId: cluster.id,
      name: 'gpu',
      type: 'h100-hgx-80gb.8x',
      count: 2,
    });
    const poolMessage = await messageWhere(
      stack,
      (m) => String(m.text) === 'Kubernetes node pool gpu: 2 × h100-hgx-80gb.8x · 2/2 nodes ready',
      'the pool',
    );
    await messageWhere(
      stack,
      (m) => String(m.text).startsWith('Kubernetes cluster prod: v1.31'),
      'the cluster',
    );
    await stack.cloud.deleteK8sNodePool({ clusterId: cluster.id, poolId: pool.id });
    await messageWhere(
      stack,
      (m) => m.ts === poolMessage.ts && String(m.text) === 'Kubernetes node pool gpu: deleted',
      'the pool gone',
    );
    await delivered(stack);
    const replies = stack.slack.thread(CHANNEL, poolMessage.ts).map((m) => String(m.text));
    expect(replies).toEqual([
      ':sparkles: Appeared: 2 × h100-hgx-80gb.8x · 2/2 nodes ready.',
      ':wastebasket: Deleted (last seen 2 × h100-hgx-80gb.8x · 2/2 nodes ready).',
    ]);
    expectCleanSlack(stack);
  });
});

describe('two watcher replicas', () => {
  let stack: BotStack;
  beforeAll(async () => {
    // Two watch workers on one queue; the schedulers are off so the test fires the looks itself.
    stack = await startBotStack({ shape: 'B', watch: { replicas: 2, schedulers: false } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('post each change once when they look at the same moment', async () => {
    const projectId = stack.sim.info.projectId;
    const signal = new AbortController().signal;
    const machine = await stack.cloud.createInstance({ name: 'twin-1', type: 'cpu.16x' });
    await instanceState(stack, machine.id, 'running');
    await listenerAnswer(stack, 'watch on');
    expect((await pollProject(stack.watch!.deps, projectId, signal)).status).toBe('baseline');

    await stack.cloud.stopInstance({ id: machine.id });
    await instanceState(stack, machine.id, 'stopped');
    // Looks on both replicas (queued jobs) and four more in this process, all at once.
    const queued = [1, 2, 3, 4].map((n) =>
      addWatchJob(stack.watch!.queue, { v: 1, job: 'poll', projectId }, `poll-twin-${n}`),
    );
    const direct = [1, 2, 3, 4].map(() => pollProject(stack.watch!.deps, projectId, signal));
    const [outcomes] = await Promise.all([Promise.all(direct), Promise.all(queued)]);
    await until('the looks to finish', async () => {
      const counts = await stack.watch!.queue.getJobCounts('waiting', 'active', 'delayed');
      return Object.values(counts).every((n) => n === 0) ? true : undefined;
    });
    await messageWhere(stack, (m) => String(m.text).startsWith('Instance twin-1: stopped'), 'twin-1 stopped');
    await delivered(stack);

    const messages = messagesOf(stack, 'twin-1');
    expect(messages).toHaveLength(1);
    expect(messages[0]!.history).toHaveLength(1);
    const replies = stack.slack.thread(CHANNEL, messages[0]!.ts).map((m) => String(m.text));
    expect(replies).toHaveLength(1);
    expect(replies[0]).toMatch(/^state: `running` → `stopped`/);
    const committedWithChanges = outcomes.filter(
      (o: PollOutcome) => o.status === 'committed' && o.changes > 0,
    );
    expect(committedWithChanges.length).toBeLessThanOrEqual(1);
    expectCleanSlack(stack);
  });
});

describe('a look of 1,000 changes', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B', watch: { schedulers: false } });
    stack.sim.control.setCapacity('cpu.16x', 2_000);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('reaches the channel as one summary with every change in its thread, in a handful of Slack calls, waiting out a 429', async () => {
    const projectId = stack.sim.info.projectId;
    const signal = new AbortController().signal;
    await listenerAnswer(stack, 'watch on');
    expect((await pollProject(stack.watch!.deps, projectId, signal)).status).toBe('baseline');
    const names = Array.from({ length: 1_000 }, (_, i) => `burst-${String(i).padStart(4, '0')}`);
    for (let i = 0; i < names.length; i += 50) {
      await Promise.all(
        names.slice(i, i + 50).map((name) => stack.cloud.createInstance({ name, type: 'cpu.16x' })),
      );
    }
    // Slack says "slow down" to the very first message.
    stack.slack.rateLimit('chat.postMessage', 1, 1);
    const since = stack.slack.mark();
    const outcome = await pollProject(stack.watch!.deps, projectId, signal);
    // Three list calls (instances, Kubernetes clusters, Slurm clusters), however many machines.
    expect(outcome).toMatchObject({ status: 'committed', changes: 1_000, calls: 3 });
    await messageWhere(stack, (m) => String(m.text).startsWith('1,000 changes'), 'the summary', 20_000);
    await delivered(stack);

    // One message in the channel: the summary, with the counts and the first names.
    const top = stack.slack.channelView(CHANNEL);
    expect(top).toHaveLength(1);
    const summary = JSON.stringify(top[0]!.blocks);
    expect(summary).toContain('*1,000 changes* at one look: 1,000 appeared.');
    expect(summary).toContain('*Type:* 1,000 cpu.16x');
    expect(summary).toContain('*burst-0000*, *burst-0001*');
    expect(summary).toContain('and 995 more');
    // Every change in its thread, one line each, in name order.
    const thread = stack.slack.thread(CHANNEL, top[0]!.ts);
    const lines = thread.flatMap((m) =>
      (m.blocks as Array<{ text: { text: string } }>).flatMap((b) => b.text.text.split('\n')),
    );
    expect(lines).toHaveLength(1_000);
    expect(
      lines.map((l) => /^• \*(burst-\d+)\* \(`[^`]+`, cpu\.16x\): :sparkles: Appeared: /.exec(l)?.[1]),
    ).toEqual(names);
    // At most five Slack calls for the lot, the one Slack answered 429 included.
    const calls = stack.slack.calls.slice(since).filter((c) => c.method.startsWith('chat.'));
    expect(calls.length).toBeLessThanOrEqual(5);
    expect(calls.filter((c) => c.status === 429)).toHaveLength(1);
    expectCleanSlack(stack);
  });
});

describe('a cloud that answers 429', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B', watch: { schedulers: false } });
    // Prices cached, so no look asks for them: that refresh lists instances too and would take a 429 meant for the look.
    await primeCatalog(stack);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('puts the project on back-off for at least Retry-After, then looks again', async () => {
    const projectId = stack.sim.info.projectId;
    const signal = new AbortController().signal;
    await listenerAnswer(stack, 'watch on');
    expect((await pollProject(stack.watch!.deps, projectId, signal)).status).toBe('baseline');
    // Every try of the client's own retries gets a 429 asking for 1 s.
    stack.sim.control.addFault({ operation: 'listInstances', status: 429, retryAfterSeconds: 1, count: 4 });
    const started = Date.now();
    const outcome = await pollProject(stack.watch!.deps, projectId, signal);
    expect(outcome.status).toBe('backoff');
    if (outcome.status !== 'backoff') return;
    expect(outcome.untilMs).toBeGreaterThanOrEqual(started + 1_000);
    expect(outcome.reason).toContain('429');
    expect(await fanOutPolls(stack.watch!.deps)).toContain('0 project(s) to look at, 1 backing off');
    // Once the back-off is over the next tick looks again, and a good answer clears it.
    const later = { ...stack.watch!.deps, now: () => outcome.untilMs + 1 };
    expect(await fanOutPolls(later)).toContain('1 project(s) to look at, 0 backing off');
    // The look it queued (on a watch worker) gets a good answer, which clears the back-off.
    await until('the back-off to clear', async () =>
      (await createSnapshotStore(stack.store).backoff(projectId)) === undefined ? true : undefined,
    );
    expect((await createSnapshotStore(stack.store).read(projectId)).version).toBe(2);
    expect(stack.slack.channelView(CHANNEL)).toEqual([]);
  });
});
