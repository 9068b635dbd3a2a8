import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { App, HTTPReceiver, LogLevel } from '@slack/bolt';
import { createInfraClient, type InfraClient } from '../../src/cloud/index.js';
import { staticToken } from '../../src/cloud/token-provider.js';

// The Bolt app every baseline of the benchmarks starts from: an HTTPReceiver with the same signature
// check and body parsing as gpuops, bot ids given as gpuops gives them (no auth.test before the first
// listener) and no conversation store, so a baseline differs from the others only in its handler.

/** From SIGNING_SECRET, SLACK_BOT_TOKEN and SLACK_API_URL, as the benchmarks start their baselines. */
export function benchBoltApp(
  options: { signingSecret: string; token: string; slackApiUrl: string } = {
    signingSecret: process.env.SIGNING_SECRET ?? 'bench-secret',
    token: process.env.SLACK_BOT_TOKEN ?? 'xoxb-bench',
    slackApiUrl: process.env.SLACK_API_URL ?? 'http://127.0.0.1:9/api/',
  },
): {
  app: App;
  receiver: HTTPReceiver;
} {
  const receiver = new HTTPReceiver({
    signingSecret: options.signingSecret,
    endpoints: '/slack/events',
    processBeforeResponse: false,
    logLevel: LogLevel.ERROR,
  });
  const app = new App({
    token: options.token,
    receiver,
    logLevel: LogLevel.ERROR,
    clientOptions: { slackApiUrl: options.slackApiUrl },
    botId: 'B0BENCH',
    botUserId: 'U0BENCH',
    tokenVerificationEnabled: false,
    convoStore: false,
  });
  return { app, receiver };
}

/** Listens on a free port, prints {"msg":"ready","port":N}, and on SIGTERM closes `close` and exits. */
export async function listenUntilTerm(
  receiver: HTTPReceiver,
  close: () => Promise<unknown> = async () => {},
) {
  const server = (await receiver.start({ port: 0, host: '127.0.0.1' })) as Server;
  process.stdout.write(`${JSON.stringify({ msg: 'ready', port: (server.address() as AddressInfo).port })}\n`);
  process.once('SIGTERM', () => {
    void Promise.all([receiver.stop(), close()]).finally(() => process.exit(0));
  });
}

/** A setting the baseline cannot run without. */
export function requiredEnv(key: string): string {
  const value = process.env[key];
  if (!value) throw new Error(`${process.argv[1] ?? 'baseline'}: ${key} is required`);
  return value;
}

/** The cloud client gpuops uses, on the simulator the benchmark gives in CLOUD_API_URL and friends. */
export function benchCloud(): { cloud: InfraClient; projectId: string } {
  const projectId = requiredEnv('CLOUD_PROJECT_ID');
  const cloud = createInfraClient({
    baseUrl: requiredEnv('CLOUD_API_URL'),
    shape: 'B',
    tokens: staticToken(requiredEnv('CLOUD_API_TOKEN')),
    projectId,
  });
  return { cloud, projectId };
}
