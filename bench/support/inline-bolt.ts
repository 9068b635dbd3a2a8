import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { App, HTTPReceiver, LogLevel } from '@slack/bolt';
import { createInfraClient } from '../../src/cloud/index.js';
import { staticToken } from '../../src/cloud/token-provider.js';

// The baseline of the end-to-end benchmark: what a bot without a queue would do. The /gpu handler
// acknowledges, posts one message, then calls the same simulator with the same cloud client from the
// listener itself (resolve the name, start or stop, read until the state settles) and edits the
// message to its final line. No Redis, no worker, no retries beyond the cloud client's own.
// Run as a child process: `node --import tsx bench/support/inline-bolt.ts` with SIGNING_SECRET,
// SLACK_API_URL, SLACK_BOT_TOKEN, CLOUD_API_URL, CLOUD_API_TOKEN, CLOUD_PROJECT_ID set.

const env = (key: string): string => {
  const value = process.env[key];
  if (!value) throw new Error(`inline-bolt: ${key} is required`);
  return value;
};

const projectId = env('CLOUD_PROJECT_ID');
const cloud = createInfraClient({
  baseUrl: env('CLOUD_API_URL'),
  shape: 'B',
  tokens: staticToken(env('CLOUD_API_TOKEN')),
  projectId,
});
const receiver = new HTTPReceiver({
  signingSecret: env('SIGNING_SECRET'),
  endpoints: '/slack/events',
  processBeforeResponse: false,
  logLevel: LogLevel.ERROR,
});
const app = new App({
  token: env('SLACK_BOT_TOKEN'),
  receiver,
  logLevel: LogLevel.ERROR,
  clientOptions: { slackApiUrl: env('SLACK_API_URL') },
  botId: 'B0BENCH',
  botUserId: 'U0BENCH',
  tokenVerificationEnabled: false,
});

app.command('/gpu', async ({ command, ack, client }) => {
  await ack();
  const [verb, name] = command.text.trim().split(/\s+/);
  const channel = command.channel_id;
  const posted = await client.chat.postMessage({ channel, text: `Working: /gpu ${verb} ${name}` });
  const ts = posted.ts!;
  try {
    if (verb !== 'start' && verb !== 'stop') throw new Error(`unknown verb ${verb}`);
    const instance = (await cloud.listInstances({ projectId })).find((i) => i.name === name);
    if (!instance) throw new Error(`no instance ${name}`);
    if (verb === 'start') await cloud.startInstance({ id: instance.id }, { projectId });
    else await cloud.stopInstance({ id: instance.id }, { projectId });
    const target = verb === 'start' ? 'running' : 'stopped';
    let delay = 50;
    let state = instance.state;
    for (;;) {
      state = (await cloud.getInstance({ id: instance.id }, { projectId })).state;
      if (state === target) break;
      await sleep(delay);
      delay = Math.min(delay * 2, 1_000);
    }
    await client.chat.update({ channel, ts, text: `Done: ${name} is ${state}.` });
  } catch (err) {
    await client.chat.update({ channel, ts, text: `Failed: ${(err as Error).message}` });
  }
});

const server = (await receiver.start({ port: 0, host: '127.0.0.1' })) as Server;
process.stdout.write(`${JSON.stringify({ msg: 'ready', port: (server.address() as AddressInfo).port })}\n`);
process.once('SIGTERM', () => {
  void Promise.all([receiver.stop(), cloud.close()]).finally(() => process.exit(0));
});
