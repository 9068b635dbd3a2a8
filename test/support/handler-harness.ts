import { randomUUID } from 'node:crypto';
import { LogLevel, WebClient } from '@slack/web-api';
import { Job } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, inject } from 'vitest';
import {
  createInfraClient,
  createPlatformClient,
  type InfraClient,
  type PlatformClient,
} from '../../src/cloud/index.js';
import type { Shape } from '../../src/cloud/shape.js';
import { staticToken } from '../../src/cloud/token-provider.js';
import { handlerFor } from '../../src/commands/handlers.js';
import { parseCommandJobData } from '../../src/commands/job-payload.js';
import type { HandlerDeps } from '../../src/commands/kit/handler-deps.js';
import { classifyFailure } from '../../src/commands/kit/job-errors.js';
import { JobRun } from '../../src/commands/kit/job-run.js';
import { parseCommand } from '../../src/commands/parse-command.js';
import { FakeSlackApi } from '../../src/devkit/fake-slack-api.js';
import type { JobData, SealedInputs } from '../../src/jobs/job-data.js';
import { createQueue, type GpuQueue } from '../../src/jobs/queue.js';
import { createLogger } from '../../src/log/logger.js';
import { type RunningSim, startSim } from '../../src/sim/start-sim.js';
import { createReplyPort } from '../../src/slack/reply-port.js';
import { createSealer, type Sealer } from '../../src/store/sealed.js';
import { createStore, type Store } from '../../src/store/store.js';
import { until } from './until.js';

// One resource handler at a time, run as the worker runs it (src/workers/create-worker.ts): a real
// BullMQ job read back from Redis, the JobRun the worker builds from it, the handler the worker's table
// names for its kind. Around it, the simulator over HTTP on a manual clock (a transition lasts until
// the test moves the clock, so every resource outlasts any job lock), the fake Slack Web API the job's
// message is edited in, and a real Redis store. An attempt that "dies" is one whose signal is aborted,
// as a worker closing aborts it; the next attempt is built from the job as Redis then holds it.

export const CHANNEL = 'C0HANDLERS';
export const OWNER = 'U0ADA';
const BOT_TOKEN = 'xoxb-handler-tests';
/** Long enough that nothing settles unless the test moves the clock past it. */
export const TRANSITION_MS = 600_000;
/** The handlers' cloud client gives up on an answer after this (CLOUD_TIMEOUT_MS). */
export const CLIENT_TIMEOUT_MS = 2_000;

/** A job's progress saying it sent its create long enough ago that the answer cannot still come. */
export const sentLongAgo = () => ({ progress: { sent: true, sentAt: Date.now() - 60_000 } });

/** What the person reads at the end of an attempt: the answer, or the failure as the worker words it. */
export interface Answer {
  readonly done: boolean;
  readonly text: string;
  /** A failure no retry fixes: the job ends with this text at once. */
  readonly permanent: boolean;
}

/** A done answer's data besides its sentence: what a Workflow Builder step gets, and the blocks shown. */
export interface AnswerData {
  readonly outputs?: Readonly<Record<string, unknown>> | undefined;
  /** The result's blocks as JSON, to look for what they show. */
  readonly blocks: string;
}

/** A resource as the simulator holds it (its API view plus simulator fields). */
export type Held = Readonly<Record<string, unknown>> & { readonly id: string; readonly name: string };

/** What the cloud holds in the project the handlers work in. */
export interface HeldProject {
  readonly instances: readonly Held[];
  readonly filesystems: readonly Held[];
  readonly kubernetesClusters: readonly (Held & { readonly pools: readonly Held[] })[];
  readonly slurmClusters: readonly (Held & {
    readonly pools: readonly Held[];
    readonly users: readonly { username: string; sshKeys: string[]; sudo: boolean }[];
  })[];
}

export interface QueuedJob {
  readonly id: string;
  /** The channel message the job edits in place. */
  readonly ts: string;
}

export interface HandlerHarness {
  readonly sim: RunningSim;
  readonly slack: FakeSlackApi;
  readonly store: Store;
  readonly queue: GpuQueue;
  readonly sealer: Sealer;
  /** The test's own client: changes the cloud behind the handler's back and reads what it holds. */
  readonly cloud: InfraClient;
  readonly platform: PlatformClient;
  /** What the cloud holds now in the handlers' project. */
  held(): HeldProject;
  /** Queues `/gpu <text>` as the listener does: the job record, the "Queued" message, the job. */
  enqueue(
    text: string,
    extra?: { progress?: Record<string, unknown>; sealed?: SealedInputs; userId?: string },
  ): Promise<QueuedJob>;
  /** The run a worker gives the job's next attempt, from the job as Redis holds it now. */
  attempt(job: QueuedJob, signal?: AbortSignal): Promise<JobRun>;
  /** Starts the job's next attempt; the test moves the clock while it waits, then reads `answer`. */
  begin(job: QueuedJob): Promise<{ answer: Promise<Answer> }>;
  /** The job's next attempt, whole: for what settles without the clock. */
  run(job: QueuedJob): Promise<Answer>;
  /** An attempt whose worker dies (its signal aborted) once the job's message matches `pattern`. */
  diesAt(job: QueuedJob, pattern: RegExp): Promise<void>;
  /** Runs the handler of the run's kind, as the worker does, and says what the person reads. */
  answer(run: JobRun): Promise<Answer>;
  /** The data of the last done answer `answer` gave. */
  lastData(): AnswerData | undefined;
  /** The job's channel message as it reads now. */
  shown(job: QueuedJob): string;
  /** Waits until the job's channel message matches. */
  shows(job: QueuedJob, pattern: RegExp, timeoutMs?: number): Promise<string>;
  /**
   * The cloud holds the next `operation` past the handlers' client timeout, then does it anyway: the
   * attempt that sent it gets no answer, the resource is made.
   */
  loseNextAnswer(operation: string): void;
  /** Holds the next `operation` at the cloud's door, runs `meanwhile` once it is held, then lets it in. */
  crossedBy(operation: string, meanwhile: () => Promise<unknown>): Promise<void>;
  /** Moves the simulator's clock past one transition. */
  settle(): Promise<void>;
  close(): Promise<void>;
}

export async function startHandlerHarness(shape: Shape): Promise<HandlerHarness> {
  const sim = await startSim({
    shape,
    port: 0,
    clock: 'manual',
    transitionMs: TRANSITION_MS,
    metrics: false,
    log: () => {},
  });
  const slack = await FakeSlackApi.start({ tokens: [BOT_TOKEN] });
  const redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
  const prefix = `test-handlers-${randomUUID().slice(0, 8)}`;
  const store = createStore(redis, prefix);
  const queue = createQueue(redis, `{${prefix}}`);
  const sealer = createSealer(redis, prefix, Buffer.alloc(32, 9));
  const clientOf = (timeoutMs?: number) =>
    createInfraClient({
      baseUrl: sim.info.cloudUrl,
      shape,
      tokens: staticToken(sim.info.cloudToken),
      projectId: sim.info.projectId,
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    });
  const platformOf = (timeoutMs?: number) =>
    createPlatformClient({
      baseUrl: sim.info.platformUrl,
      apiKey: sim.info.platformApiKey,
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    });
  const handlerCloud = clientOf(CLIENT_TIMEOUT_MS);
  const handlerPlatform = platformOf(CLIENT_TIMEOUT_MS);
  const cloud = clientOf();
  const platform = platformOf();
  const web = new WebClient(BOT_TOKEN, {
    slackApiUrl: slack.apiUrl,
    logLevel: LogLevel.ERROR,
    retryConfig: { retries: 0 },
  });
  const deps: HandlerDeps = {
    cloud: handlerCloud,
    platform: handlerPlatform,
    slack: web,
    store,
    log: createLogger({ level: 'silent' }),
    shape,
    defaultProjectId: sim.info.projectId,
    reply: createReplyPort({ client: web, log: createLogger({ level: 'silent' }) }),
    sealer,
    // Polls in real time; the simulator's clock alone decides when a state settles.
    timing: { pollStartMs: 20, pollMaxMs: 100, settleTimeoutMs: 60_000, progressQuietMs: 0 },
  };
  let last: AnswerData | undefined;
  const text = (job: QueuedJob) => String(slack.message(CHANNEL, job.ts)?.text ?? '');

  const harness: HandlerHarness = {
    sim,
    slack,
    store,
    queue,
    sealer,
    cloud,
    platform,
    held() {
      const projects = sim.control.state().projects as (HeldProject & { id: string })[];
      const mine = projects.find((p) => p.id === sim.info.projectId);
      if (!mine) throw new Error('the simulator lost the default project');
      return mine;
    },
    async enqueue(typed, extra = {}) {
      const parsed = parseCommand(typed);
      if (!parsed.ok) throw new Error(`"${typed}" does not parse: ${parsed.error.message}`);
      const id = `h-${randomUUID().slice(0, 12)}`;
      const userId = extra.userId ?? OWNER;
      const posted = await web.chat.postMessage({ channel: CHANNEL, text: `Queued: /gpu ${typed}` });
      const ts = posted.ts!;
      const now = Date.now();
      await store.recordJob({
        id,
        kind: parsed.command.kind,
        summary: typed,
        userId,
        channelId: CHANNEL,
        state: 'queued',
        createdAt: now,
        updatedAt: now,
      });
      const data: JobData = {
        v: 1,
        command: parsed.command,
        ctx: { teamId: 'T0HANDLERS', channelId: CHANNEL, userId, requestedAt: now },
        message: { channel: CHANNEL, ts },
        ...(extra.progress ? { progress: extra.progress } : {}),
        ...(extra.sealed ? { sealed: extra.sealed } : {}),
      };
      // Delayed far ahead: no worker listens on this queue, and none should ever take it.
      await queue.add(parsed.command.kind, data, { jobId: id, delay: 3_600_000 });
      return { id, ts };
    },
    async attempt(job, signal = new AbortController().signal) {
      const stored = await Job.fromId<JobData>(queue, job.id);
      if (!stored) throw new Error(`job ${job.id} is not in Redis`);
      return new JobRun(stored, parseCommandJobData(stored.data), deps, signal, await store.job(job.id));
    },
    async begin(job) {
      return { answer: harness.answer(await harness.attempt(job)) };
    },
    async run(job) {
      return harness.answer(await harness.attempt(job));
    },
    async diesAt(job, pattern) {
      const worker = new AbortController();
      const dying = harness.answer(await harness.attempt(job, worker.signal));
      await harness.shows(job, pattern);
      worker.abort();
      // The aborted attempt ends with the abort, never with an answer of its own.
      const ended = await dying.then(
        (a) => a,
        (err: unknown) => err,
      );
      if (!(ended instanceof Error)) throw new Error(`the dying attempt answered: ${JSON.stringify(ended)}`);
    },
    async answer(run) {
      const handler = handlerFor(run.data.command.kind);
      if (!handler) throw new Error(`no handler for ${run.data.command.kind}`);
      try {
        const outcome = await handler(run, run.data.command);
        last = { outputs: outcome.outputs, blocks: JSON.stringify(outcome.result ?? []) };
        return { done: true, text: outcome.detail, permanent: false };
      } catch (err) {
        if (run.signal.aborted) throw err;
        const failure = classifyFailure(err);
        return { done: false, text: failure.message, permanent: failure.permanent };
      }
    },
    lastData: () => last,
    shown: text,
    async shows(job, pattern, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const now = text(job);
        if (pattern.test(now)) return now;
        if (Date.now() > deadline) {
          const history = (slack.message(CHANNEL, job.ts)?.history ?? []).map((v) => `  ${String(v.text)}`);
          throw new Error(`the message never matched ${pattern}; it went through:\n${history.join('\n')}`);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    loseNextAnswer(operation) {
      sim.control.addFault({ operation, latencyMs: CLIENT_TIMEOUT_MS + 500, count: 1 });
    },
    async crossedBy(operation, meanwhile) {
      const held = sim.control.addFault({ operation, latencyMs: 1_500, count: 1 });
      await until(`the ${operation} to reach the cloud`, () =>
        sim.control.faults().find((f) => f.id === held.id && f.hits > 0),
      );
      await meanwhile();
    },
    settle: () => sim.control.advance(TRANSITION_MS + 1),
    async close() {
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      for (const c of [handlerCloud, cloud]) await c.close();
      for (const p of [handlerPlatform, platform]) await p.close();
      redis.disconnect();
      await Promise.allSettled([slack.close(), sim.close()]);
    },
  };
  return harness;
}

/** A harness for the enclosing suite, its cloud back at its start state before each test. */
export function useHandlerHarness(shape: Shape): () => HandlerHarness {
  let harness: HandlerHarness | undefined;
  beforeAll(async () => {
    harness = await startHandlerHarness(shape);
  });
  afterAll(async () => {
    await harness?.close();
  });
  beforeEach(() => {
    harness?.sim.control.reset();
  });
  return () => {
    if (!harness) throw new Error(`the shape ${shape} harness did not start`);
    return harness;
  };
}
