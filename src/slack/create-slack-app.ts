import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CustomRoute, Receiver } from '@slack/bolt';
import { App, HTTPReceiver, LogLevel, SocketModeReceiver } from '@slack/bolt';
import type { WebClientOptions } from '@slack/web-api';
import type { Logger } from '../log/logger.js';
import { tracingOn } from '../obs/trace-spans.js';
import { accessGate } from './access-gate.js';
import { actionReplayGuard } from './action-replays.js';
import { registerApprovalActions } from './listeners/approval-actions.js';
import { registerFormActions } from './listeners/form-actions.js';
import { registerFormSubmissions } from './listeners/form-submissions.js';
import { registerGpuCommand } from './listeners/gpu-command.js';
import { homePublisherOf, registerHomeActions } from './listeners/home-actions.js';
import { registerLeaseActions } from './listeners/lease-actions.js';
import { registerPageActions } from './listeners/page-actions.js';
import { registerWatchActions } from './listeners/watch-actions.js';
import { registerWorkflowSteps } from './listeners/workflow-steps.js';
import { createOpenModal } from './open-form.js';
import { slackRequestPorts } from './request-ports.js';
import { requestSpan } from './request-span.js';
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
  /** For the listeners' Web API client: short retries within Slack's 3 s, a fetch that counts errors. */
  readonly clientOptions?: SlackClientOptions;
  /** Called with the milliseconds from each POST /slack/events' arrival to the end of its answer. */
  readonly onAnswered?: (ms: number) => void;
  /** Which listeners the app gets; default all of them. A test of one listener registers that one alone. */
  readonly listeners?: (app: App, deps: SlackDeps) => void;
}

export type SlackClientOptions = Pick<WebClientOptions, 'fetch' | 'retryConfig' | 'timeout'>;

/** Socket Mode: no public URL and no signing secret; Slack's envelopes arrive over a WebSocket. */
export interface SlackSocketOptions {
  readonly botToken: string;
  /** App-level token (xapp-…) with connections:write, for apps.connections.open. */
  readonly appToken: string;
  readonly slackApiUrl: string;
  readonly botId?: string | undefined;
  readonly botUserId?: string | undefined;
  readonly clientOptions?: SlackClientOptions;
}

export interface SlackWeb {
  readonly app: App;
  /** Listens on the port (0 for a free one) and resolves with the bound port. */
  start(port: number, host?: string): Promise<number>;
  stop(): Promise<void>;
}

export interface SlackSocket {
  readonly app: App;
  /** Opens the connection (apps.connections.open, then the WebSocket) and resolves once Slack says hello. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The SDK's log lines without the payloads they quote. At debug level Socket Mode logs every
 * envelope it receives and sends, and the Web API client every request body: form submissions with
 * cloud-init user data or a pasted kubeconfig, views, messages. Payloads are JSON, so a line is kept
 * up to its first `{` or `[`; a message that could not be parsed is not quoted at all.
 */
function withoutPayload(parts: readonly unknown[]): string {
  const text = parts.map(String).join(' ');
  const unparsed = text.indexOf('(will ignore)');
  if (unparsed >= 0) return `${text.slice(0, unparsed + '(will ignore)'.length)} [payload not logged]`;
  const at = text.search(/[{[]/);
  return at < 0 ? text : `${text.slice(0, at)}[payload not logged]`;
}

function boltLogger(log: Logger) {
  const child = log.child({ component: 'bolt' });
  let level = LogLevel.INFO;
  return {
    // Bolt calls debug() several times per request: build the line only when it will be written.
    debug: (...m: unknown[]) => {
      if (child.isLevelEnabled('debug')) child.debug(withoutPayload(m));
    },
    info: (...m: unknown[]) => child.info(withoutPayload(m)),
    warn: (...m: unknown[]) => child.warn(withoutPayload(m)),
    error: (...m: unknown[]) => child.error(withoutPayload(m)),
    setLevel: (l: LogLevel) => {
      level = l;
    },
    getLevel: () => level,
    setName: () => {},
  };
}

/** Every listener of the bot, whichever receiver delivers the requests. Listener groups register here. */
export function registerListeners(app: App, deps: SlackDeps): void {
  // Tracing on: the request's root span, outermost so everything after is in its trace.
  if (tracingOn()) app.use(requestSpan);
  // First: guests and other workspaces are refused before any listener sees them (docs/policy.md).
  if (deps.guardrails) app.use(accessGate(deps, deps.botTeamId));
  // A signed button press delivered a second time (a captured body sent again) runs nothing.
  app.use(actionReplayGuard(deps));
  // Forms open from the cached catalogue unless the caller supplies its own opener.
  registerGpuCommand(app, { ...deps, openModal: deps.openModal ?? createOpenModal(deps) });
  registerFormSubmissions(app, deps);
  registerFormActions(app, deps);
  registerApprovalActions(app, deps);
  registerLeaseActions(app, deps);
  registerWatchActions(app, deps);
  registerPageActions(app, deps);
  registerHomeActions(app, deps);
  registerWorkflowSteps(app, deps);
  app.error(async (err) => {
    deps.log.error({ err }, 'unhandled error in a Slack listener');
  });
}

function createApp(
  receiver: Receiver,
  options: Pick<
    SlackAppOptions,
    'botToken' | 'slackApiUrl' | 'botId' | 'botUserId' | 'clientOptions' | 'listeners'
  >,
  deps: Omit<SlackDeps, 'client' | 'ports'>,
  logger: ReturnType<typeof boltLogger>,
): App {
  const app = new App({
    token: options.botToken,
    receiver,
    logger,
    // No listener reads context.conversation; Bolt's default store would look it up on every request.
    convoStore: false,
    // A 429 fails that one call at once: the SDK's default would pause every call of the listener for
    // Retry-After, and every command on this replica would then miss Slack's 3 s acknowledgement.
    clientOptions: {
      ...options.clientOptions,
      rejectRateLimitedCalls: true,
      slackApiUrl: options.slackApiUrl,
    },
    ...(options.botId && options.botUserId
      ? { botId: options.botId, botUserId: options.botUserId, tokenVerificationEnabled: false }
      : {}),
  });
  const client = app.client;
  const listenerDeps: SlackDeps = {
    ...deps,
    client,
    ports: slackRequestPorts({
      client,
      store: deps.store,
      log: deps.log,
      // An approver's Home lists what waits for them: a new request publishes it again (through a
      // worker where the composition root gave one, coalesced per person either way).
      refreshHome: deps.homeLater ?? ((userId) => homePublisherOf(listenerDeps).publish(userId)),
    }),
  };
  (options.listeners ?? registerListeners)(app, listenerDeps);
  return app;
}

/**
 * The same app on a receiver of the caller's: `gpuops demo` delivers requests from its terminal chat
 * through one (src/chat/terminal-receiver.ts), so the demo runs exactly the listeners Slack reaches.
 */
export function createSlackApp(
  receiver: Receiver,
  options: Pick<SlackAppOptions, 'botToken' | 'slackApiUrl' | 'botId' | 'botUserId' | 'clientOptions'>,
  deps: Omit<SlackDeps, 'client' | 'ports'>,
): App {
  return createApp(receiver, options, deps, boltLogger(deps.log));
}

/** The Bolt app over HTTP at POST /slack/events, signatures and timestamps checked by Bolt. */
export function createSlackWeb(
  options: SlackAppOptions,
  deps: Omit<SlackDeps, 'client' | 'ports'>,
): SlackWeb {
  const logger = boltLogger(deps.log);
  const receiver = new HTTPReceiver({
    signingSecret: options.signingSecret,
    endpoints: '/slack/events',
    customRoutes: options.routes ?? [],
    processBeforeResponse: false,
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    logger,
  });
  const app = createApp(receiver, options, deps, logger);
  let server: Server | undefined;
  return {
    app,
    async start(port, host = '0.0.0.0') {
      server = (await receiver.start({ port, host })) as Server;
      const onAnswered = options.onAnswered;
      // Timed from before Bolt reads the body, so the figure is the wait Slack sees (bar the network).
      if (onAnswered) {
        server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
          if (req.method !== 'POST' || !req.url?.startsWith('/slack/events')) return;
          const started = performance.now();
          res.once('finish', () => onAnswered(performance.now() - started));
        });
      }
      return (server.address() as AddressInfo).port;
    },
    async stop() {
      // Requests in flight finish; idle keep-alive sockets would otherwise hold the close open.
      const closing = receiver.stop();
      server?.closeIdleConnections();
      const force = setTimeout(() => server?.closeAllConnections(), 5_000);
      try {
        await closing;
      } finally {
        clearTimeout(force);
      }
    },
  };
}

/** The same app over Socket Mode; apps.connections.open goes to `slackApiUrl` like every other call. */
export function createSlackSocket(
  options: SlackSocketOptions,
  deps: Omit<SlackDeps, 'client' | 'ports'>,
): SlackSocket {
  const logger = boltLogger(deps.log);
  const receiver = new SocketModeReceiver({
    appToken: options.appToken,
    logger,
    installerOptions: {
      clientOptions: {
        slackApiUrl: options.slackApiUrl,
        ...(options.clientOptions?.fetch ? { fetch: options.clientOptions.fetch } : {}),
      },
    },
  });
  const app = createApp(receiver, options, deps, logger);
  return {
    app,
    async start() {
      await receiver.start();
    },
    async stop() {
      await receiver.stop();
    },
  };
}
