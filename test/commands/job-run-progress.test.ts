import { Writable } from 'node:stream';
import { LogLevel, WebClient } from '@slack/web-api';
import { Job } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createInfraClient } from '../../src/cloud/index.js';
import { staticToken } from '../../src/cloud/token-provider.js';
import { parseCommandJobData } from '../../src/commands/job-payload.js';
import type { HandlerDeps } from '../../src/commands/kit/handler-deps.js';
import { JobRun } from '../../src/commands/kit/job-run.js';
import { FakeSlackApi } from '../../src/devkit/fake-slack-api.js';
import type { JobData } from '../../src/jobs/job-data.js';
import { createQueue, type GpuQueue } from '../../src/jobs/queue.js';
import { createLogger } from '../../src/log/logger.js';
import { createReplyPort } from '../../src/slack/reply-port.js';
import { createStore } from '../../src/store/store.js';
import { until } from '../support/until.js';

// A job's progress within its quiet period is shown (and recorded) later, from a timer: if Redis is
// gone by then, the record cannot be written. That is logged, and the job goes on; it must never
// become a rejection nobody handles (Node ends a process on one).

const CHANNEL = 'C0QUIET';
const TOKEN = 'xoxb-quiet-tests';

describe('a progress state recorded after the quiet period, with Redis gone', () => {
  let slack: FakeSlackApi;
  let queue: GpuQueue;
  let queueRedis: Redis;
  beforeAll(async () => {
    slack = await FakeSlackApi.start({ tokens: [TOKEN] });
    queueRedis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null });
    queue = createQueue(queueRedis, `quiet-${process.pid}-${Date.now()}`);
  });
  afterAll(async () => {
    await queue?.obliterate({ force: true }).catch(() => {});
    await queue?.close();
    queueRedis?.disconnect();
    await slack?.close();
  });

  it('logs that it could not record the progress, and the job goes on', async () => {
    // The store's own connection, failing fast as production's does, so it can be taken away.
    const storeRedis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1, enableOfflineQueue: false });
    // Without an offline queue a command sent before the connection is up fails: wait for it.
    await until('the store connection', () => (storeRedis.status === 'ready' ? true : undefined));
    const store = createStore(storeRedis, `quiet-${process.pid}-${Date.now()}`);
    const lines: string[] = [];
    const log = createLogger({
      level: 'warn',
      destination: new Writable({
        write(chunk, _enc, done) {
          lines.push(String(chunk));
          done();
        },
      }) as never,
    });
    const web = new WebClient(TOKEN, {
      slackApiUrl: slack.apiUrl,
      logLevel: LogLevel.ERROR,
      retryConfig: { retries: 0 },
    });
    const posted = await web.chat.postMessage({ channel: CHANNEL, text: 'Queued: /gpu stop box-1' });
    const now = Date.now();
    const record = {
      id: 'quiet-1',
      kind: 'stop',
      summary: '/gpu stop box-1',
      userId: 'U0ADA',
      channelId: CHANNEL,
      state: 'queued' as const,
      createdAt: now,
      updatedAt: now,
    };
    await store.recordJob(record);
    const data: JobData = {
      v: 1,
      command: { kind: 'stop', instance: 'box-1' },
      ctx: { teamId: 'T0QUIET', channelId: CHANNEL, userId: 'U0ADA', requestedAt: now },
      message: { channel: CHANNEL, ts: posted.ts! },
    };
    await queue.add('stop', data, { jobId: 'quiet-1', delay: 3_600_000 });
    const job = (await Job.fromId<JobData>(queue, 'quiet-1'))!;
    const deps: HandlerDeps = {
      cloud: createInfraClient({ baseUrl: 'http://127.0.0.1:9', tokens: staticToken('unused'), shape: 'B' }),
      slack: web,
      store,
      log,
      shape: 'B',
      reply: createReplyPort({ client: web, log }),
      timing: { progressQuietMs: 150 },
    };
    const run = new JobRun(
      job,
      parseCommandJobData(job.data),
      deps,
      new AbortController().signal,
      await store.job('quiet-1'),
    );

    await run.update('working', 'Working…');
    storeRedis.disconnect();
    await until('the progress to be given up with a warning', () =>
      lines.some((l) => l.includes('could not record a job’s progress')) ? true : undefined,
    );
    // The next step still waits on the progress before it, which ended quietly: no rejection reaches it.
    await expect(run.flushProgress()).resolves.toBeUndefined();
  });
});
