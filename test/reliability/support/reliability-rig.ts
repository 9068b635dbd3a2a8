import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { expect } from 'vitest';
import { type BotOptions, type RunningBot, startBot } from '../../../src/app/start-bot.js';
import { type Config, parseConfig, type Role } from '../../../src/config.js';
import { FakeSlackApi, type RecordedCall, type StoredMessage } from '../../../src/devkit/fake-slack-api.js';
import { QUEUE_NAME, QUEUE_PREFIX } from '../../../src/jobs/queue.js';
import { createLogger, type Logger } from '../../../src/log/logger.js';
import { type RunningSim, type SimOptions, startSim } from '../../../src/sim/start-sim.js';
import { readCatalog } from '../../../src/store/catalog-cache.js';
import { createStore, type Store } from '../../../src/store/store.js';
import { type PrivateRedis, startPrivateRedis } from '../../../src/sys/private-redis.js';
import { type GpuopsProcess, spawnScript } from '../../support/gpuops-process.js';
import { localEnv } from '../../support/local-env.js';
import {
  postSigned,
  ResponseUrlServer,
  type SignedResponse,
  slashCommandBody,
} from '../../support/slack-driver.js';

// The reliability suite's rig: the simulator, the Slack fake, a response_url server and a private
// Redis of the file's own, and gpuops bots started the way `gpuops start|web|worker` starts them
// (startBot, the composition root), configured only through the environment they would read.

export const SIGNING_SECRET = 'reliability-signing-secret-7f3a';
export const BOT_TOKEN = 'xoxb-reliability-5b9e1c';
export const TYPE = 'h100-hgx-80gb.1x';
/** The final phases of a channel message. */
export const FINAL = /^(Done|Failed):/;
/** The built-in policy with no rate limits (a policy file of the rig's own). */
export const UNLIMITED_POLICY = 'rate_limits:\n  per_user: { requests: 0 }\n  per_channel: { requests: 0 }\n';
/** UNLIMITED_POLICY with watchers looking every second (the watcher tests). */
export const WATCHING_POLICY = `watch:\n  poll_every: 1s\n${UNLIMITED_POLICY}`;

export interface RigOptions {
  readonly sim?: Partial<SimOptions>;
  /** Redis with an append-only file and fsync on every write (the Redis restart test). */
  readonly appendOnly?: boolean;
}

export interface Bot extends RunningBot {
  /** POST /slack/events of this bot (web and all roles). */
  readonly url: string;
  /** Every log line this bot wrote, as JSON text. */
  readonly logLines: string[];
}

export interface BotProcess extends GpuopsProcess {
  /** POST /slack/events once ready (web and all roles). */
  url(): Promise<string>;
  /** Sends SIGUSR2 to a spare started with BOT_WAIT_FOR_GO and waits until it is ready. */
  go(): Promise<void>;
}

export interface Rig {
  readonly sim: RunningSim;
  readonly slack: FakeSlackApi;
  readonly responses: ResponseUrlServer;
  readonly redisServer: PrivateRedis;
  /** A connection of the test's own to the same Redis. */
  readonly redis: Redis;
  /** The environment `gpuops` would read, pointed at this rig. */
  env(extra?: Readonly<Record<string, string>>): Record<string, string>;
  config(extra?: Readonly<Record<string, string>>): Config;
  /** Writes a policy file of the test's own (removed with the rig); its path is for GPUOPS_POLICY. */
  policy(yaml: string): Promise<string>;
  /** A bot in this process, with its own connections and a logger that keeps every line. */
  start(
    role: Role,
    options?: Omit<BotOptions, 'role' | 'log'> & { env?: Record<string, string>; logLevel?: string },
  ): Promise<Bot>;
  /**
   * gpuops in a child process (support/bot-process.ts) with this rig's environment plus `knobs`
   * (BOT_ROLE, BOT_LOCK_MS, BOT_STALLED_MS, BOT_POLL_MS, BOT_CONCURRENCY, BOT_WAIT_FOR_GO, or any
   * gpuops variable). Resolves once it is ready (or standing by, with BOT_WAIT_FOR_GO).
   */
  spawn(knobs: Readonly<Record<string, string>>): Promise<BotProcess>;
  /**
   * Waits until the first catalogue refresh cached the price list (creates and starts need it), in
   * `store`: the rig's own Redis unless a test runs gpuops on a Redis of its own (Sentinel, Cluster).
   */
  catalogue(store?: Store, timeoutMs?: number): Promise<void>;
  /** Request jobs (not the bot's own scheduled ones) still waiting, active or delayed. */
  pendingRequests(): Promise<number>;
  close(): Promise<void>;
}

/** A logger that keeps its lines (JSON text) in `lines`. */
export function capturingLogger(level: string, lines: string[]): Logger {
  return createLogger({ level, destination: { write: (line: string) => lines.push(line) } });
}

export async function startRig(options: RigOptions = {}): Promise<Rig> {
  const sim = await startSim({
    shape: 'B',
    port: 0,
    metrics: false,
    transitionMs: 100,
    seed: 42,
    log: () => {},
    ...options.sim,
  });
  // Thousands of machines in some tests: capacity is not what they test.
  sim.control.setCapacity(TYPE, 100_000);
  const slack = await FakeSlackApi.start({ tokens: [BOT_TOKEN] });
  const responses = await ResponseUrlServer.start();
  const redisServer = await startPrivateRedis({ install: true, appendOnly: options.appendOnly ?? false });
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 });
  redis.on('error', () => {}); // the Redis restart test takes it away on purpose
  // The built-in policy without its rate limits: the load tests send hundreds of commands a minute
  // per channel on purpose. The noisy-user test gives its own policy.
  const policyDir = await mkdtemp(join(tmpdir(), 'gpuops-rig-policy-'));
  const policyFile = join(policyDir, 'policy.yaml');
  await writeFile(policyFile, UNLIMITED_POLICY);
  let policies = 0;
  const bots: Bot[] = [];
  const children: GpuopsProcess[] = [];

  const env = (extra: Readonly<Record<string, string>> = {}): Record<string, string> => ({
    ...localEnv({
      sim,
      slack,
      redisUrl: redisServer.url,
      botToken: BOT_TOKEN,
      signingSecret: SIGNING_SECRET,
    }),
    LOG_LEVEL: 'info',
    GPUOPS_POLICY: policyFile,
    ...extra,
  });
  const config = (extra: Readonly<Record<string, string>> = {}) => parseConfig(env(extra), 'bot');

  return {
    sim,
    slack,
    responses,
    redisServer,
    redis,
    env,
    config,
    async policy(yaml) {
      const file = join(policyDir, `policy-${++policies}.yaml`);
      await writeFile(file, yaml);
      return file;
    },
    async start(role, startOptions = {}) {
      const { env: extra, logLevel, ...botOptions } = startOptions;
      const logLines: string[] = [];
      const bot = await startBot(config(extra), {
        host: '127.0.0.1',
        shutdownGraceMs: 2_000,
        workerTiming: { pollStartMs: 50, pollMaxMs: 200, settleTimeoutMs: 30_000 },
        ...botOptions,
        role,
        log: capturingLogger(logLevel ?? 'info', logLines),
      });
      const running: Bot = Object.assign(bot, {
        url: `http://127.0.0.1:${bot.port}/slack/events`,
        logLines,
      });
      bots.push(running);
      return running;
    },
    async spawn(knobs) {
      const child = spawnScript('test/reliability/support/bot-process.ts', env(knobs));
      children.push(child);
      const ready = () => child.waitForLog((r) => r.msg === 'bot ready', 30_000);
      if (knobs.BOT_WAIT_FOR_GO) await child.waitForLog((r) => r.msg === 'standing by', 30_000);
      else await ready();
      return Object.assign(child, {
        url: async () => `http://127.0.0.1:${(await ready()).port}/slack/events`,
        go: async () => {
          child.child.kill('SIGUSR2');
          await ready().catch(async (err: unknown) => {
            throw new Error(`${(err as Error).message}\nexit: ${JSON.stringify(await child.exited)}`);
          });
        },
      });
    },
    async catalogue(store = createStore(redis), timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const entry = await readCatalog(store, sim.info.projectId);
        if (entry?.catalog.configurations) return;
        if (Date.now() > deadline) throw new Error('gpuops did not cache the price list in time');
        await sleep(25);
      }
    },
    async pendingRequests() {
      const queue = new Queue(QUEUE_NAME, { connection: redis, prefix: QUEUE_PREFIX });
      try {
        const jobs = await queue.getJobs(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);
        // Requests carry a command; the bot's own scheduled jobs (catalogue refresh, watchers) do not.
        return jobs.filter((j) => j && (j.data as { command?: unknown } | undefined)?.command !== undefined)
          .length;
      } finally {
        await queue.close();
      }
    },
    async close() {
      await Promise.allSettled(bots.map((b) => b.stop()));
      await Promise.allSettled(children.map((c) => c.kill()));
      redis.disconnect();
      await responses.close();
      await slack.close();
      await sim.close();
      await redisServer.close();
      await rm(policyDir, { recursive: true, force: true });
    },
  };
}

export interface Sent {
  readonly text: string;
  readonly channelId: string;
  readonly response: SignedResponse;
  readonly responseUrl: string;
  /** The fake's call count before the request: what the request caused comes after it. */
  readonly since: number;
}

/** Sends `/gpu <text>` to a bot as Slack would. */
export async function slash(
  rig: Rig,
  url: string,
  text: string,
  options: { channelId: string; userId?: string; userName?: string; triggerId?: string },
): Promise<Sent> {
  const responseUrl = rig.responses.newUrl();
  const since = rig.slack.mark();
  const response = await postSigned(url, slashCommandBody({ text, responseUrl, ...options }), {
    secret: SIGNING_SECRET,
  });
  return { text, channelId: options.channelId, response, responseUrl, since };
}

/** The channel message a state-changing request posted (the listener's "Queued", or the job's own). */
/** Matches a message about `/gpu <text>`: its first three words, then the end of a word. */
function commandShown(text: string): RegExp {
  const words = text.trim().split(/\s+/).slice(0, 3).join(' ');
  return new RegExp(`/gpu ${words.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w.-])`);
}

export async function messageOf(rig: Rig, sent: Sent, timeoutMs = 20_000): Promise<string> {
  const posted = await rig.slack.waitFor(
    'chat.postMessage',
    // Its own message, by its command (the words up to the name: a message shortens the rest, such as
    // a public key): posts follow the acknowledgement, so another request's message in the same channel
    // can come first (and a Queued post that met an outage is left to the job).
    (c) =>
      c.body.channel === sent.channelId &&
      commandShown(sent.text).test(String(c.body.text)) &&
      (c.response as { ok?: boolean } | undefined)?.ok === true,
    timeoutMs,
    sent.since,
  );
  return String((posted.response as { ts: string }).ts);
}

/** Waits for the message to show its final phase, and returns it. */
export async function finalOf(
  rig: Rig,
  channelId: string,
  ts: string,
  timeoutMs = 60_000,
): Promise<StoredMessage> {
  const current = rig.slack.message(channelId, ts);
  if (!current || !FINAL.test(String(current.text))) {
    await rig.slack.waitFor(
      'chat.update',
      (c: RecordedCall) => c.body.ts === ts && FINAL.test(String(c.body.text)),
      timeoutMs,
    );
  }
  return rig.slack.message(channelId, ts)!;
}

/** How many versions of a message were a final answer (Done or Failed). */
export function finals(message: StoredMessage): number {
  return message.history.filter((v) => FINAL.test(String(v.text))).length;
}

/** Every value kept in Redis under any key, as text (strings, hashes, lists, sets, sorted sets, streams). */
export async function redisText(redis: Redis): Promise<{ keys: number; text: string }> {
  const parts: string[] = [];
  let keys = 0;
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'COUNT', 500);
    cursor = next;
    for (const key of batch) {
      keys++;
      parts.push(key);
      const type = await redis.type(key);
      if (type === 'string') parts.push((await redis.get(key)) ?? '');
      else if (type === 'hash') parts.push(JSON.stringify(await redis.hgetall(key)));
      else if (type === 'list') parts.push(JSON.stringify(await redis.lrange(key, 0, -1)));
      else if (type === 'set') parts.push(JSON.stringify(await redis.smembers(key)));
      else if (type === 'zset') parts.push(JSON.stringify(await redis.zrange(key, '0', '-1')));
      else if (type === 'stream') parts.push(JSON.stringify(await redis.xrange(key, '-', '+')));
    }
  } while (cursor !== '0');
  return { keys, text: parts.join('\n') };
}

const JWT = /eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/;

/**
 * Where any of the rig's credentials (or any access token) shows up: in the given log lines, in
 * anything kept in Redis, or in anything sent to Slack. Empty when nothing leaked.
 */
export async function leaks(
  rig: Rig,
  logLines: readonly string[],
  more: Readonly<Record<string, string>> = {},
): Promise<string[]> {
  const needles: Record<string, string> = {
    'bot token': BOT_TOKEN,
    'signing secret': SIGNING_SECRET,
    'cloud API token': rig.sim.info.cloudToken,
    'cloud client secret': rig.sim.info.clientSecret,
    'platform API key': rig.sim.info.platformApiKey,
    'metrics API key': rig.sim.info.metricsApiKey,
    ...more,
  };
  const places: Record<string, string> = {
    logs: logLines.join('\n'),
    Redis: (await redisText(rig.redis)).text,
    Slack: JSON.stringify([
      rig.slack.calls.map((c) => c.body),
      rig.responses.posts.map((p) => p.body),
      [...rig.slack.views.values()].map((v) => v.history),
    ]),
  };
  const found: string[] = [];
  for (const [where, text] of Object.entries(places)) {
    for (const [what, needle] of Object.entries(needles))
      if (text.includes(needle)) found.push(`${what} in ${where}`);
    if (JWT.test(text)) found.push(`an access token (JWT) in ${where}`);
  }
  return found;
}

/** One command sent by sendLanes. */
export interface LaneRequest {
  /** When it was sent, in ms from the start of the run. */
  readonly at: number;
  readonly sent: Sent;
  readonly kind: 'create' | 'ls';
  readonly name: string;
  /** What the listener answered Slack ('' for an empty acknowledgement). */
  readonly answer: string;
}

/**
 * A stream of commands through an outage: `lanes` lanes, each in its own channel (`C0<prefix><lane>`),
 * sending two creates then an `ls`, `everyMs` apart, until `runMs` after `started` (or `count` commands). Every answer must
 * be an HTTP 200; what it said is in `answer`.
 */
export async function sendLanes(
  rig: Rig,
  url: string,
  o: { prefix: string; lanes: number; everyMs: number; runMs: number; started: number; count?: number },
): Promise<LaneRequest[]> {
  const requests: LaneRequest[] = [];
  let sent = 0;
  // Until runMs has passed, or (with `count`) until that many commands were sent, however long it takes.
  const more = () => (o.count === undefined ? Date.now() - o.started < o.runMs : sent++ < o.count);
  await Promise.all(
    Array.from({ length: o.lanes }, async (_, lane) => {
      const channelId = `C0${o.prefix}${lane}`;
      for (let k = 0; more(); k++) {
        const kind = k % 3 === 2 ? 'ls' : 'create';
        const name = `${o.prefix.toLowerCase()}-${lane}-${k}`;
        const text = kind === 'ls' ? 'ls' : `create ${name} ${TYPE}`;
        const at = Date.now() - o.started;
        const sent = await slash(rig, url, text, { channelId, userId: `U0${o.prefix[0]}${lane}X${k}` });
        expect(sent.response.status).toBe(200);
        const answer =
          sent.response.text === '' ? '' : String((sent.response.json() as { text?: string }).text);
        requests.push({ at, sent, kind, name, answer });
        await new Promise((resolve) => setTimeout(resolve, o.everyMs));
      }
    }),
  );
  return requests;
}
