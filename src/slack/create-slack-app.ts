import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CustomRoute } from '@slack/bolt';
import { App, HTTPReceiver, LogLevel } from '@slack/bolt';
import type { Logger } from '../log/logger.js';
import { registerGpuCommand } from './listeners/gpu-command.js';
import type { SlackDeps } from './slack-deps.js';

export interface SlackAppOptions {
  readonly botToken: string;
  readonly signingSecret: string;
  readonly slackApiUrl: string;
  /** From auth.test at start-up, so Bolt does not call it before every first listener. */
  readonly botId?: string | undefined;
  readonly botUserId?: string | undefined;
  /** Extra HTTP routes of the web role: /healthz, /readyz, /metrics. */
  readonly routes?: CustomRoute[];
  /** Largest request body accepted, in bytes; Slack's own are far smaller. */
  readonly bodyLimit?: number;
}

export interface SlackWeb {
  readonly app: App;
  /** Listens on the port (0 for a free one) and resolves with the bound port. */
  start(port: number, host?: string): Promise<number>;
  stop(): Promise<void>;
}

function boltLogger(log: Logger) {
  const child = log.child({ component: 'bolt' });
  let level = LogLevel.INFO;
  return {
    debug: (...m: unknown[]) => child.debug(m.map(String).join(' ')),
    info: (...m: unknown[]) => child.info(m.map(String).join(' ')),
    warn: (...m: unknown[]) => child.warn(m.map(String).join(' ')),
    error: (...m: unknown[]) => child.error(m.map(String).join(' ')),
    setLevel: (l: LogLevel) => {
      level = l;
    },
    getLevel: () => level,
    setName: () => {},
  };
}

/** The Bolt app over HTTP at POST /slack/events, signatures and timestamps checked by Bolt. */
export function createSlackWeb(options: SlackAppOptions, deps: Omit<SlackDeps, 'client'>): SlackWeb {
  const logger = boltLogger(deps.log);
  const receiver = new HTTPReceiver({
    signingSecret: options.signingSecret,
    endpoints: '/slack/events',
    customRoutes: options.routes ?? [],
    processBeforeResponse: false,
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    logger,
  });
  const app = new App({
    token: options.botToken,
    receiver,
    logger,
    clientOptions: { slackApiUrl: options.slackApiUrl },
    ...(options.botId && options.botUserId
      ? { botId: options.botId, botUserId: options.botUserId, tokenVerificationEnabled: false }
      : {}),
  });
  registerGpuCommand(app, { ...deps, client: app.client });
  app.error(async (err) => {
    deps.log.error({ err }, 'unhandled error in a Slack listener');
  });
  let server: Server | undefined;
  return {
    app,
    async start(port, host = '0.0.0.0') {
      server = (await receiver.start({ port, host })) as Server;
      return (server.address() as AddressInfo).port;
    },
    async stop() {
      await receiver.stop();
    },
  };
}
