import { WebClient } from '@slack/web-api';
import { Redis } from 'ioredis';
import { request } from 'undici';
import { createInfraClient } from '../../src/cloud/index.js';
import type { Shape } from '../../src/cloud/shape.js';
import { staticToken } from '../../src/cloud/token-provider.js';
import { createLogger } from '../../src/log/logger.js';
import { createStore } from '../../src/store/store.js';
import { createWorker } from '../../src/workers/create-worker.js';
import { testGuardrails } from './guardrails.js';

// A worker in a process of its own, for tests that kill it (SIGKILL mid-job) and start another:
// `node --import tsx test/support/worker-entry.ts` with the env below. It serves the queue and store
// prefixes of a test's bot stack, and prints one JSON line {"msg":"worker ready"} once it takes jobs.

const need = (key: string): string => {
  const value = process.env[key];
  if (!value) throw new Error(`worker-entry: ${key} is required`);
  return value;
};

const log = createLogger({ level: process.env.LOG_LEVEL ?? 'warn', name: 'test-worker' });
const redis = new Redis(need('REDIS_URL'), { maxRetriesPerRequest: 1 });
const connection = new Redis(need('REDIS_URL'), { maxRetriesPerRequest: null });
const shape = (process.env.CLOUD_API_SHAPE ?? 'B') as Shape;
const projectId = need('CLOUD_PROJECT_ID');

const worker = createWorker(
  connection,
  {
    cloud: createInfraClient({
      baseUrl: need('CLOUD_API_URL'),
      shape,
      tokens: staticToken(need('CLOUD_API_TOKEN')),
      projectId,
      ...(process.env.CLOUD_TIMEOUT_MS ? { timeoutMs: Number(process.env.CLOUD_TIMEOUT_MS) } : {}),
    }),
    slack: new WebClient(need('SLACK_BOT_TOKEN'), {
      slackApiUrl: need('SLACK_API_URL'),
      retryConfig: { retries: 2 },
    }),
    store: createStore(redis, need('STORE_PREFIX')),
    guardrails: testGuardrails(redis, need('STORE_PREFIX')),
    log,
    shape,
    defaultProjectId: projectId,
    respond: async (url, body) => {
      const res = await request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      await res.body.dump();
    },
    timing: { pollStartMs: 50, pollMaxMs: 200, settleTimeoutMs: 20_000 },
  },
  {
    prefix: need('QUEUE_PREFIX'),
    concurrency: 2,
    lockDurationMs: Number(process.env.LOCK_MS ?? 1_000),
    stalledIntervalMs: Number(process.env.STALLED_MS ?? 500),
  },
);
worker.on('active', (job) =>
  process.stdout.write(`${JSON.stringify({ msg: 'job active', jobId: job.id })}\n`),
);
worker.on('completed', (job) =>
  process.stdout.write(`${JSON.stringify({ msg: 'job completed', jobId: job.id })}\n`),
);

await worker.waitUntilReady();
process.stdout.write(`${JSON.stringify({ msg: 'worker ready', pid: process.pid })}\n`);

process.once('SIGTERM', () => {
  void worker.close().finally(() => {
    redis.disconnect();
    connection.disconnect();
    process.exit(0);
  });
});
