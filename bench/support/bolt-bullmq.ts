import { setTimeout as sleep } from 'node:timers/promises';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { benchBoltApp, benchCloud, listenUntilTerm, requiredEnv } from './bench-bolt-app.js';

// The end-to-end benchmark's baseline for the design's architecture at its best (issue 16): a minimal
// Bolt listener that acknowledges, posts the one message a request shows and adds a BullMQ job, and a
// raw BullMQ worker in the same process that makes the cloud calls gpuops makes (resolve the name,
// start or stop, read until settled) and edits the message once: two Slack calls, no policy, store or
// audit. Idle, it is also the memory benchmark's baseline: a Bolt app, a queue and a worker and an
// ioredis connection. Run as a child process: `node --import tsx bench/support/bolt-bullmq.ts` with
// SIGNING_SECRET, SLACK_API_URL, SLACK_BOT_TOKEN, REDIS_URL, CLOUD_API_URL, CLOUD_API_TOKEN and
// CLOUD_PROJECT_ID set.

const env = requiredEnv;

interface BenchJob {
  readonly verb: string;
  readonly name: string;
  readonly channel: string;
  readonly ts: string;
}

const QUEUE = 'bench-bolt-bullmq';
const { cloud, projectId } = benchCloud();
// One connection for the queue, one for the worker's blocking reads (BullMQ needs its own for those).
const connection = new Redis(env('REDIS_URL'), { maxRetriesPerRequest: null });
const queue = new Queue<BenchJob>(QUEUE, { connection });
const { app, receiver } = benchBoltApp();
app.command('/gpu', async ({ command, ack, client }) => {
  await ack();
  const [verb = '', name = ''] = command.text.trim().split(/\s+/);
  const channel = command.channel_id;
  const posted = await client.chat.postMessage({ channel, text: `Queued: /gpu ${verb} ${name}` });
  await queue.add('command', { verb, name, channel, ts: posted.ts! }, { removeOnComplete: true });
});

const worker = new Worker<BenchJob>(
  QUEUE,
  async (job) => {
    const { verb, name, channel, ts } = job.data;
    let text: string;
    try {
      if (verb !== 'start' && verb !== 'stop') throw new Error(`unknown verb ${verb}`);
      const instance = (await cloud.listInstances({ projectId })).find((i) => i.name === name);
      if (!instance) throw new Error(`no instance ${name}`);
      const target = verb === 'start' ? 'running' : 'stopped';
      if (instance.state !== target) {
        if (verb === 'start') await cloud.startInstance({ id: instance.id }, { projectId });
        else await cloud.stopInstance({ id: instance.id }, { projectId });
      }
      // Read until settled, first at once, then after 1 s doubling (gpuops' worker timing).
      let delay = 1_000;
      for (;;) {
        const state = (await cloud.getInstance({ id: instance.id }, { projectId })).state;
        if (state === target) break;
        await sleep(delay);
        delay = Math.min(delay * 2, 15_000);
      }
      text = `Done: ${name} is ${target}.`;
    } catch (err) {
      text = `Failed: ${(err as Error).message}`;
    }
    await app.client.chat.update({ channel, ts, text });
  },
  {
    connection: new Redis(env('REDIS_URL'), { maxRetriesPerRequest: null }),
    concurrency: 8,
  },
);

await listenUntilTerm(receiver, () => Promise.all([worker.close(), queue.close(), cloud.close()]));
