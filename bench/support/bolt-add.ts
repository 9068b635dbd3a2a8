import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { benchBoltApp, listenUntilTerm } from './bench-bolt-app.js';

// The acknowledgement benchmark's baseline for a listener that persists a job (issue 16): a bare Bolt
// app whose /gpu handler adds one BullMQ job with the command, then acknowledges, as the design's
// architecture does at its best. No parsing, policy, dedupe, record or audit. Run as a child process:
// `node --import tsx bench/support/bolt-add.ts` with SIGNING_SECRET, SLACK_API_URL and REDIS_URL set;
// it prints {"msg":"ready","port":N} once listening.

const connection = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
  maxRetriesPerRequest: null,
});
const queue = new Queue('bench-bolt-add', { connection });
const { app, receiver } = benchBoltApp();
app.command('/gpu', async ({ command, ack }) => {
  // Persisted before the answer, as gpuops does: an acknowledged request is never lost.
  await queue.add('command', {
    text: command.text,
    userId: command.user_id,
    channelId: command.channel_id,
    teamId: command.team_id,
    responseUrl: command.response_url,
  });
  await ack({ response_type: 'ephemeral', text: 'Looking that up…' });
});

await listenUntilTerm(receiver, () => queue.close());
