import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { App, HTTPReceiver, LogLevel } from '@slack/bolt';

// The baseline of the acknowledgement benchmark: a bare Bolt app on an HTTPReceiver whose /gpu handler
// only acknowledges. Same signature check, same body parsing, no work. Run as a child process:
// `node --import tsx bench/support/bare-bolt.ts` with SIGNING_SECRET and SLACK_API_URL set; it prints
// {"msg":"ready","port":N} once listening.

const receiver = new HTTPReceiver({
  signingSecret: process.env.SIGNING_SECRET ?? 'bench-secret',
  endpoints: '/slack/events',
  processBeforeResponse: false,
  logLevel: LogLevel.ERROR,
});
const app = new App({
  token: 'xoxb-bench',
  receiver,
  logLevel: LogLevel.ERROR,
  clientOptions: { slackApiUrl: process.env.SLACK_API_URL ?? 'http://127.0.0.1:9/api/' },
  // Given, as gpuops gives them: no auth.test before the first listener (without them Bolt calls auth.test first: see docs/performance.md).
  botId: 'B0BENCH',
  botUserId: 'U0BENCH',
  tokenVerificationEnabled: false,
});
app.command('/gpu', async ({ ack }) => {
  await ack();
});

const server = (await receiver.start({ port: 0, host: '127.0.0.1' })) as Server;
process.stdout.write(`${JSON.stringify({ msg: 'ready', port: (server.address() as AddressInfo).port })}\n`);
process.once('SIGTERM', () => {
  void receiver.stop().finally(() => process.exit(0));
});
