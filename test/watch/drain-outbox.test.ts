import { randomBytes } from 'node:crypto';
import { WebClient } from '@slack/web-api';
import type { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { InfraClient } from '../../src/cloud/index.js';
import { classifySlackFailure } from '../../src/commands/kit/slack-failure.js';
import { FakeSlackApi } from '../../src/devkit/fake-slack-api.js';
import { createLogger } from '../../src/log/logger.js';
import { DEFAULT_POLICY } from '../../src/policy/policy.js';
import { createStore, type Store } from '../../src/store/store.js';
import { createOutbox, type NewOutboxEntry } from '../../src/store/watch-outbox.js';
import { createWatchWorker } from '../../src/watch/create-watch-worker.js';
import { startDrains } from '../../src/watch/drain-outbox.js';
import type { WatchDeps } from '../../src/watch/watch-deps.js';
import { createWatchQueue, type WatchQueue } from '../../src/watch/watch-queue.js';

// The per-channel outbox against a real Redis, real BullMQ workers and the real Slack SDK talking to
// the fake Slack API: bursts arrive whole and in order, a 429's Retry-After is waited out by a
// delayed drain, and a message Slack refuses for good is dropped without blocking the rest.

const CHANNEL = 'C0WATCH';

/** Polls until `read` gives `want`: the drain updates Redis just after Slack answers. */
async function until<T>(read: () => Promise<T>, want: T, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value === want || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('the watchers outbox', () => {
  let redis: Redis;
  let queueConnection: Redis;
  let workerConnection: Redis;
  let slack: FakeSlackApi;
  let store: Store;
  let queue: WatchQueue;
  let workers: Worker[];
  let deps: WatchDeps;
  let id: string;

  beforeAll(async () => {
    const url = inject('redisUrl');
    redis = new Redis(url, { maxRetriesPerRequest: 1 });
    queueConnection = new Redis(url, { maxRetriesPerRequest: 1 });
    workerConnection = new Redis(url, { maxRetriesPerRequest: null });
    slack = await FakeSlackApi.start({ tokens: ['xoxb-test'], users: [{ id: 'U0ADA', name: 'ada' }] });
    id = randomBytes(4).toString('hex');
    store = createStore(redis, `to${id}`);
    queue = createWatchQueue(queueConnection, `{to${id}}`);
    deps = {
      // The drain never calls the cloud nor acts for the policy.
      cloud: {} as InfraClient,
      submit: () => Promise.reject(new Error('the drain submits no requests')),
      botUserId: 'U0BOT',
      slack: new WebClient('xoxb-test', {
        slackApiUrl: slack.apiUrl,
        rejectRateLimitedCalls: true,
        retryConfig: { retries: 0 },
      }),
      store,
      log: createLogger({ level: 'silent' }),
      policy: DEFAULT_POLICY,
      shape: 'B',
      queue,
      minIntervalMs: 2,
    };
    // Two replicas draining the same queue: the lease keeps one drain per channel at a time.
    workers = [0, 1].map(() => createWatchWorker(workerConnection, deps, { prefix: `{to${id}}` }));
  });

  afterEach(() => {
    expect(slack.violations).toEqual([]);
    expect(slack.unexpected).toEqual([]);
  });

  afterAll(async () => {
    await Promise.all(workers.map((w) => w.close()));
    await queue.obliterate({ force: true }).catch(() => {});
    await queue.close();
    const keys = await redis.keys(`to${id}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    queueConnection.disconnect();
    workerConnection.disconnect();
    await slack.close();
  });

  const texts = (channel: string) => slack.channelView(channel).map((m) => m.text);

  async function push(target: string, entries: NewOutboxEntry[]) {
    const token = await createOutbox(store).push(target, entries);
    if (token) await startDrains(deps, [{ target, token }]);
  }

  it('delivers a burst of 100 in order, waiting out a 429 with Retry-After, dropping nothing', async () => {
    const channel = `${CHANNEL}1`;
    slack.rateLimit('chat.postMessage', 1, 1);
    const names = Array.from({ length: 100 }, (_, i) => `m-${String(i).padStart(3, '0')}`);
    // Four producers in a row, as four polls would: each batch appended whole, in order.
    for (let i = 0; i < 100; i += 25) {
      await push(
        channel,
        names.slice(i, i + 25).map((text) => ({ op: 'message', mode: 'post', text })),
      );
    }
    await slack.waitFor('chat.postMessage', (c) => c.body.text === 'm-099' && c.status === 200, 20_000);
    expect(texts(channel)).toEqual(names);
    const posts = slack.callsTo('chat.postMessage').filter((c) => c.body.channel === channel);
    const limited = posts.filter((c) => c.status === 429);
    expect(limited).toHaveLength(1);
    // The refused message was sent again once the limit was over, before anything after it.
    expect(limited[0]!.body.text).toBe('m-000');
    expect(posts.filter((c) => c.status === 200).map((c) => c.body.text)).toEqual(names);
    expect(await until(() => createOutbox(store).pending(channel), 0)).toBe(0);
  });

  it('edits a message in place by its ref, replies in its thread, and forgets it when told', async () => {
    const channel = `${CHANNEL}2`;
    await push(channel, [
      { op: 'message', mode: 'upsert', ref: 'res:1', text: 'v1' },
      { op: 'message', mode: 'post', thread: 'res:1', text: 'reply 1' },
      { op: 'message', mode: 'upsert', ref: 'res:1', text: 'v2' },
      { op: 'message', mode: 'post', thread: 'res:1', text: 'reply 2', forget: true },
    ]);
    await slack.waitFor('chat.postMessage', (c) => c.body.text === 'reply 2' && c.status === 200);
    const [head, ...rest] = slack.channelView(channel);
    expect(rest).toEqual([]);
    expect(head!.history.map((v) => v.text)).toEqual(['v1', 'v2']);
    expect(slack.thread(channel, head!.ts).map((m) => m.text)).toEqual(['reply 1', 'reply 2']);
    expect(await until(() => createOutbox(store).ref(channel, 'res:1'), undefined)).toBeUndefined();
  });

  it('drops a message Slack refuses for good and sends the rest', async () => {
    const channel = `${CHANNEL}3`;
    slack.failWith('chat.postMessage', 'not_in_channel', 1);
    await push(channel, [
      { op: 'message', mode: 'post', text: 'lost' },
      { op: 'message', mode: 'post', text: 'kept' },
    ]);
    await slack.waitFor('chat.postMessage', (c) => c.body.text === 'kept' && c.status === 200);
    expect(texts(channel)).toEqual(['kept']);
  });

  it('posts to a person by DM and uploads a file into the thread of an earlier message', async () => {
    const outbox = createOutbox(store);
    const blob = await outbox.putBlob(Buffer.from('not really a png'));
    await push('U0ADA', [
      { op: 'message', mode: 'post', ref: 'alert', text: 'your GPU is idle' },
      { op: 'file', blob, filename: 'chart.png', title: 'chart', alt: 'a chart', thread: 'alert' },
    ]);
    await slack.waitFor('files.completeUploadExternal', () => true);
    const dm = slack.dmChannelFor('U0ADA');
    const [alert] = slack.channelView(dm);
    expect(alert?.text).toBe('your GPU is idle');
    const file = [...slack.files.values()].find((f) => f.filename === 'chart.png');
    expect(file).toMatchObject({ channel: dm, threadTs: alert!.ts, completed: true });
  });
});

describe('classifySlackFailure', () => {
  let slack: FakeSlackApi;
  let client: WebClient;
  beforeAll(async () => {
    slack = await FakeSlackApi.start();
    client = new WebClient('xoxb-test', {
      slackApiUrl: slack.apiUrl,
      rejectRateLimitedCalls: true,
      retryConfig: { retries: 0 },
    });
  });
  afterAll(async () => {
    await slack.close();
  });

  const failure = async () => {
    try {
      await client.chat.postMessage({ channel: 'C1', text: 'x' });
    } catch (err) {
      return classifySlackFailure(err);
    }
    throw new Error('expected the call to fail');
  };

  it('reads Retry-After from a 429 in milliseconds', async () => {
    slack.rateLimit('chat.postMessage', 3, 1);
    expect(await failure()).toEqual({ kind: 'rate-limited', retryAfterMs: 3000 });
  });

  it('tells a message that is gone from a refusal for good and from a hiccup', async () => {
    slack.failWith('chat.postMessage', 'message_not_found', 1);
    expect(await failure()).toEqual({ kind: 'message-gone', code: 'message_not_found' });
    slack.failWith('chat.postMessage', 'is_archived', 1);
    expect(await failure()).toEqual({ kind: 'permanent', code: 'is_archived' });
    slack.failWith('chat.postMessage', 'internal_error', 1);
    expect(await failure()).toEqual({ kind: 'transient' });
    expect(classifySlackFailure(new Error('socket hang up'))).toEqual({ kind: 'transient' });
  });
});
