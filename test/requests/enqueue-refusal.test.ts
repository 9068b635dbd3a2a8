import { LogLevel, WebClient } from '@slack/web-api';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseCommand } from '../../src/commands/parse-command.js';
import { FakeSlackApi } from '../../src/devkit/fake-slack-api.js';
import type { JobContext } from '../../src/jobs/job-data.js';
import { createQueue, type GpuQueue } from '../../src/jobs/queue.js';
import { MaybeQueuedError } from '../../src/jobs/replicated.js';
import { createLogger } from '../../src/log/logger.js';
import { enqueueRequest, requestJobId } from '../../src/requests/enqueue-request.js';
import { slackRequestPorts } from '../../src/slack/request-ports.js';
import { createStore, type Store } from '../../src/store/store.js';
import { type PrivateRedis, startPrivateRedis } from '../../src/sys/private-redis.js';
import { until } from '../support/gpuops-process.js';

// Which refusal proves that nothing was stored. ioredis without an offline queue refuses a command it
// cannot write; when that is the add, the job never reached Redis. When the add went through and a
// later step is refused (the wait for a replica, after the queue's Redis died), the job is stored and
// may run: the person must not be told that nothing was started.

const BOT_TOKEN = 'xoxb-enqueue-refusal';
const log = createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

describe('a request whose queue dies right after the add', () => {
  let storeRedis: Redis;
  let store: Store;
  let queueServer: PrivateRedis;
  let queueRedis: Redis;
  let queue: GpuQueue;
  let slack: FakeSlackApi;
  const prefix = `refusal${Date.now().toString(36)}`;

  beforeAll(async () => {
    storeRedis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
    store = createStore(storeRedis, prefix);
    // Its data outlives the crash, as a replica's copy would.
    queueServer = await startPrivateRedis({ appendOnly: true });
    queueRedis = new Redis(queueServer.url, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
    queueRedis.on('error', () => {});
    queue = createQueue(queueRedis, `{${prefix}}`);
    queue.on('error', () => {});
    await queue.waitUntilReady();
    slack = await FakeSlackApi.start({ tokens: [BOT_TOKEN] });
  });

  afterAll(async () => {
    await queue?.close().catch(() => {});
    queueRedis?.disconnect();
    await queueServer?.close();
    const keys = await storeRedis.keys(`${prefix}:*`);
    if (keys.length > 0) await storeRedis.del(...keys);
    storeRedis?.disconnect();
    await slack?.close();
  });

  it('is told it may run (MaybeQueuedError), not "nothing was started", and the job is there', async () => {
    const parsed = parseCommand('stop web-01');
    if (!parsed.ok) throw new Error(parsed.error.message);
    const ctx: JobContext = {
      teamId: 'T0TEST',
      channelId: 'C0REFUSAL',
      userId: 'U0ADA',
      userName: 'ada',
      requestedAt: Date.now(),
    };
    const client = new WebClient(BOT_TOKEN, { slackApiUrl: slack.apiUrl, logLevel: LogLevel.ERROR });
    const deps = {
      queue,
      store,
      ports: slackRequestPorts({ client, store, log }),
      log,
      // The add went through; then the queue's Redis dies, and the wait for a replica is refused
      // before it leaves gpuops, as the undo's removal of the job is.
      replicated: async () => {
        await queueServer.kill();
        await until(() => queueRedis.status !== 'ready', 'the queue connection to see Redis gone');
        await queueRedis.wait(1, 100);
      },
    };
    const attempt = enqueueRequest(deps, parsed.command, ctx, { deferPosts: true });
    await expect(attempt).rejects.toBeInstanceOf(MaybeQueuedError);

    // And rightly so: once its Redis is back, the job is on the queue and would run.
    await queueServer.restart();
    await until(() => queueRedis.status === 'ready', 'the queue connection back');
    const job = await queue.getJob(requestJobId(parsed.command, ctx));
    expect(job?.name).toBe('stop');
  });
});
