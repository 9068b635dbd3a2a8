import { randomBytes } from 'node:crypto';
import type { App } from '@slack/bolt';
import type { Job } from 'bullmq';
import { Redis } from 'ioredis';
import { expect, inject } from 'vitest';
import { resolveRoutes } from '../../src/cloud/route-params.js';
import type { Shape } from '../../src/cloud/shape.js';
import { FakeSlackApi, type FakeSlackOptions } from '../../src/devkit/fake-slack-api.js';
import type { JobData } from '../../src/jobs/job-data.js';
import { createQueue, type GpuQueue } from '../../src/jobs/queue.js';
import { createLogger } from '../../src/log/logger.js';
import type { Guardrails } from '../../src/policy/guardrails.js';
import { parsePolicy } from '../../src/policy/load-policy.js';
import type { Policy } from '../../src/policy/policy.js';
import { createSlackWeb, type SlackWeb } from '../../src/slack/create-slack-app.js';
import type { SlackDeps } from '../../src/slack/slack-deps.js';
import { writeCatalog } from '../../src/store/catalog-cache.js';
import { createRateLimiter } from '../../src/store/rate-limiter.js';
import { createSealer, type Sealer } from '../../src/store/sealed.js';
import { createStore, type Store } from '../../src/store/store.js';
import { testGuardrails } from './guardrails.js';
import {
  blockActionsPayload,
  eventCallbackBody,
  interactionBody,
  postSigned,
  type SignedResponse,
  type SlashCommandOptions,
  slashCommandBody,
} from './slack-driver.js';
import { until } from './until.js';

// One listener file on its own, for its direct tests: the production Bolt app (createSlackWeb: its
// HTTP receiver, signature check, Web API client and request ports) with only that listener
// registered, over real HTTP on a free port, against the fake Slack Web API, on the private Redis of
// test/global-setup.ts under prefixes of its own, with a real BullMQ queue that no worker takes from,
// so what the listener queued stays there for the test to read.

const SECRET = 'listener-signing-secret';
const TOKEN = 'xoxb-listener';
/** The project of channels with no binding (CLOUD_PROJECT_ID). */
export const DEFAULT_PROJECT = '5f0c5c52-3a8e-4c1e-9d43-6f3e8c1d2b7a';
const SEAL_KEY = Buffer.alloc(32, 9);

/** A policy from its lines; without a `rate_limits` section of its own, one with no limits. */
export function policyOf(name: string, ...lines: string[]): Policy {
  const limits = lines.some((l) => l.startsWith('rate_limits:'))
    ? []
    : ['rate_limits:', '  per_user: { requests: 0 }', '  per_channel: { requests: 0 }'];
  return parsePolicy([...lines, ...limits].join('\n'), name);
}

export interface ListenerStackOptions {
  readonly policy?: Policy;
  readonly shape?: Shape;
  readonly slack?: FakeSlackOptions;
}

export interface ListenerStack {
  readonly slack: FakeSlackApi;
  readonly redis: Redis;
  readonly store: Store;
  readonly queue: GpuQueue;
  readonly guardrails: Guardrails;
  readonly sealer: Sealer;
  /** The deps the listener was registered with (its Web API client and request ports included). */
  readonly deps: SlackDeps;
  /** Every log line written (JSON), to check that no secret and no stack trace reaches a log. */
  readonly logLines: string[];
  // Each driver resolves once the listener has finished with the request (its posts made, its job
  // queued), so a test can assert that something did not happen without waiting for it.
  /** `/gpu <text>` as Slack posts it; the response carries the listener's acknowledgement. */
  command(text: string, options?: Partial<SlashCommandOptions>): Promise<SignedResponse>;
  /** A block_actions, view_submission or other interaction payload, signed as Slack signs it. */
  interact(payload: Readonly<Record<string, unknown>>): Promise<SignedResponse>;
  /** Presses a button on a message in `channel` (default C0GPU): block_actions with a response_url of the fake's. */
  press(
    actionId: string,
    value: string | undefined,
    options?: {
      userId?: string;
      channelId?: string;
      ts?: string;
      blocks?: readonly unknown[];
      text?: string;
    },
  ): Promise<SignedResponse>;
  /** An Events API delivery around `event`; `retryNum` marks it as Slack's redelivery. */
  event(event: Readonly<Record<string, unknown>>, retryNum?: number): Promise<SignedResponse>;
  /**
   * The cached catalogue of the default project, as a worker's refresh leaves it: an H100 and an A5000
   * type with prices, and these machines (h100-hgx-80gb.8x each). Without it a request naming a machine
   * waits briefly for a refresh no worker here makes.
   */
  machines(...names: string[]): Promise<void>;
  /** Every request job on the queue, whatever its state (no worker runs here, so they stay). */
  jobs(): Promise<Job<JobData>[]>;
  /** The bot's own jobs on the queue (a catalogue refresh, an approval's expiry), by job id. */
  systemJobs(): Promise<Job[]>;
  /** Closes the listener's Redis connections (store and queue) for good: Redis is gone from here on. */
  cutRedis(): void;
  /** Ephemeral messages the fake holds for `user`, newest last. */
  ephemeralsTo(user: string): string[];
  /** The first ephemeral message to `user` (already shown or yet to come) that `match` finds. */
  ephemeral(user: string, match: RegExp): Promise<string>;
  close(): Promise<void>;
}

/** Starts the Bolt app with the listeners `register` adds, and everything it talks to. */
export async function startListenerStack(
  register: (app: App, deps: SlackDeps) => void,
  options: ListenerStackOptions = {},
): Promise<ListenerStack> {
  const tag = randomBytes(4).toString('hex');
  const slack = await FakeSlackApi.start({ tokens: [TOKEN], ...options.slack });
  const redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
  const queueRedis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
  const store = createStore(redis, `lt-${tag}`);
  const queue = createQueue(queueRedis, `{lt-${tag}}`);
  const base = testGuardrails(redis, store.prefix, options.policy);
  // As the composition root builds them: with the policy's rate limits (none in the open test policy).
  const guardrails: Guardrails = {
    ...base,
    rateLimiter: createRateLimiter(redis, store.prefix, base.policy.rateLimits),
  };
  const sealer = createSealer(redis, store.prefix, SEAL_KEY);
  const logLines: string[] = [];
  const log = createLogger({ level: 'debug', destination: { write: (line: string) => logLines.push(line) } });
  const shape = options.shape ?? 'B';
  let deps: SlackDeps | undefined;
  const inFlight = new Set<Promise<void>>();
  /** Resolves with `response` once every request under way has been handled to its end. */
  const handled = async (response: SignedResponse): Promise<SignedResponse> => {
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    return response;
  };
  const web: SlackWeb = createSlackWeb(
    {
      botToken: TOKEN,
      signingSecret: SECRET,
      slackApiUrl: slack.apiUrl,
      botId: slack.botId,
      botUserId: slack.botUserId,
      clientOptions: { retryConfig: { retries: 0 } },
      listeners: (app, given) => {
        deps = given;
        // Bolt acknowledges before the listener ends (processBeforeResponse off, as in production):
        // each request's handling is tracked, so a driver returns once the listener has finished.
        app.use(async ({ next }) => {
          const handling = next();
          inFlight.add(handling);
          try {
            await handling;
          } finally {
            inFlight.delete(handling);
          }
        });
        register(app, given);
      },
    },
    {
      queue,
      store,
      log,
      shape,
      routes: resolveRoutes(shape),
      defaultProjectId: DEFAULT_PROJECT,
      sealer,
      guardrails,
      botTeamId: slack.teamId,
    },
  );
  const port = await web.start(0, '127.0.0.1');
  const url = `http://127.0.0.1:${port}/slack/events`;
  const allJobs = async (): Promise<Job[]> =>
    (await queue.getJobs(['waiting', 'delayed', 'prioritized', 'active', 'completed', 'failed'])).filter(
      (j) => j !== undefined,
    );
  const interact = async (payload: Readonly<Record<string, unknown>>) =>
    handled(await postSigned(url, interactionBody(payload), { secret: SECRET }));
  return {
    slack,
    redis,
    store,
    queue,
    guardrails,
    sealer,
    deps: deps!,
    logLines,
    command(text, opts = {}) {
      const responseUrl = slack.responseUrl({
        userId: opts.userId ?? 'U0ADA',
        channelId: opts.channelId ?? 'C0GPU',
      });
      return postSigned(url, slashCommandBody({ responseUrl, ...opts, text }), { secret: SECRET }).then(
        handled,
      );
    },
    interact,
    press(actionId, value, opts = {}) {
      const channelId = opts.channelId ?? 'C0GPU';
      const userId = opts.userId ?? 'U0ADA';
      const ts = opts.ts ?? slack.nextTs();
      const responseUrl = slack.responseUrl({
        userId,
        channelId,
        place: { kind: 'message', channel: channelId, ts },
      });
      return interact(
        blockActionsPayload({
          actionId,
          ...(value !== undefined ? { value } : {}),
          userId,
          channelId,
          responseUrl,
          message: { ts, text: opts.text ?? '', blocks: opts.blocks ?? [] },
        }),
      );
    },
    event(event, retryNum) {
      return postSigned(url, eventCallbackBody(event), {
        secret: SECRET,
        ...(retryNum !== undefined ? { retryNum } : {}),
      }).then(handled);
    },
    machines: (...names) => primeCatalog(store, names),
    jobs: async () => (await allJobs()).filter((j) => 'command' in j.data) as Job<JobData>[],
    systemJobs: async () => (await allJobs()).filter((j) => !('command' in j.data)),
    ephemeralsTo: (user) => slack.ephemerals.filter((e) => e.user === user).map((e) => String(e.text ?? '')),
    ephemeral(user, match) {
      return until(
        `an ephemeral message to ${user} matching ${match}`,
        () =>
          slack.ephemerals
            .filter((e) => e.user === user)
            .map((e) => String(e.text ?? ''))
            .find((t) => match.test(t)),
        5_000,
      );
    },
    cutRedis() {
      redis.disconnect();
      queueRedis.disconnect();
    },
    async close() {
      await web.stop();
      await queue.close().catch(() => {});
      redis.disconnect();
      queueRedis.disconnect();
      // Through a connection of its own: the stack's may have been cut.
      const cleaner = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
      const keys = [...(await cleaner.keys(`lt-${tag}:*`)), ...(await cleaner.keys(`{lt-${tag}}:*`))];
      if (keys.length > 0) await cleaner.del(...keys);
      cleaner.disconnect();
      await slack.close();
    },
  };
}

/** Runs `test` against a stack whose Redis is gone from the start, then checks what Slack was shown. */
export async function withRedisGone(
  register: (app: App, deps: SlackDeps) => void,
  options: ListenerStackOptions,
  test: (stack: ListenerStack) => Promise<void>,
): Promise<void> {
  const stack = await startListenerStack(register, options);
  try {
    stack.cutRedis();
    await test(stack);
    expectCleanSlack(stack);
  } finally {
    await stack.close();
  }
}

/** What no listener may leave behind: a Block Kit violation, a request the fake did not expect, a stack trace in Slack. */
export function expectCleanSlack(stack: ListenerStack): void {
  stack.slack.assertNoViolations();
  const shown = [
    ...stack.slack.calls.map((c) => JSON.stringify(c.body)),
    ...stack.slack.ephemerals.map((e) => JSON.stringify(e)),
  ].join('\n');
  // A stack frame (`file.ts:12:5`) in anything shown to a person.
  expect(shown, 'a stack trace reached Slack').not.toMatch(/\.[cm]?[jt]s:\d+:\d+/);
}

const H100 = 'h100-hgx-80gb.8x';

async function primeCatalog(store: Store, names: readonly string[]): Promise<void> {
  const now = Date.now();
  await writeCatalog(store, DEFAULT_PROJECT, {
    v: 1,
    refreshedAt: now,
    configurations: [
      {
        gpuType: 'H100_SXM5_80GB',
        gpuCounts: [1, 2, 4, 8],
        pricePerGpuHour: '2.89',
        stoppedPricePerHour: '0.10',
        regions: ['eu-1'],
        provisioningMinutes: 5,
      },
      {
        gpuType: 'RTX_A5000_24GB',
        gpuCounts: [1, 2, 4],
        pricePerGpuHour: '0.45',
        stoppedPricePerHour: '0.02',
        regions: ['eu-1'],
        provisioningMinutes: 3,
      },
    ],
    instanceTypes: [
      { name: H100, offered: true, inUse: names.length, lastSeenAt: now },
      { name: 'rtx-a5000-24gb.1x', offered: true, inUse: 0, lastSeenAt: now },
    ],
    instances: names.map((name, i) => ({ id: `i-${i}-${name}`, name, type: H100 })),
    problems: [],
  });
}
