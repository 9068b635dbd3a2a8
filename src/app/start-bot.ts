import { readFileSync } from 'node:fs';
import { parseRouteOverrides, resolveRoutes } from '../cloud/index.js';
import type { Config, Role } from '../config.js';
import type { MachineReader } from '../home/home-deps.js';
import { createQueue, type GpuQueue } from '../jobs/queue.js';
import { createLogger, type Logger } from '../log/logger.js';
import { type BotMetrics, createBotMetrics } from '../obs/bot-metrics.js';
import { countSlackErrors } from '../obs/count-slack-errors.js';
import type { DependencyHealth } from '../obs/dependency-health.js';
import { traceSlackCalls } from '../obs/trace-slack-calls.js';
import type { Guardrails } from '../policy/guardrails.js';
import { loadPolicy } from '../policy/load-policy.js';
import type { Policy } from '../policy/policy.js';
import { noDeciderWarning } from '../policy/workspace-access.js';
import { type BindingCache, trackBindings } from '../store/binding-cache.js';
import { createSealer, type Sealer, sealKeyFrom, sealKeyWarning } from '../store/sealed.js';
import { CLUSTER_STORE_PREFIX, createStore, type Store } from '../store/store.js';
import { createCloudClients } from './clients.js';
import { createGuardrails } from './guardrails.js';
import { cloudMachineReader } from './home-machines.js';
import { Lifecycle } from './lifecycle.js';
import { type ListenerFactory, startReceivers } from './receivers.js';
import {
  BLOCKING,
  evictionPolicyOf,
  evictionWarning,
  FAIL_FAST,
  INVALIDATIONS,
  redisConnector,
  redisTargetOf,
} from './redis-connections.js';
import { checkBotToken } from './slack-token.js';
import { startTracing } from './tracing.js';
import { drainWorker, type StartedWorkers, startWorkers, type WorkerTuning } from './workers.js';

// The composition root: the one place that turns the configuration into clients, connections and
// roles, in one visible order. `gpuops start` runs the role of ROLE (default all: listener and workers
// in one process); `gpuops web` and `gpuops worker` force theirs. See docs/architecture.md.

export interface BotOptions extends WorkerTuning {
  /** Which role to run; default config.ROLE. */
  readonly role?: Role;
  readonly log?: Logger;
  /** Interface the HTTP server binds; default 0.0.0.0. */
  readonly host?: string;
  /** How long SIGTERM waits for jobs in hand before releasing them to other workers; default 20 s. */
  readonly shutdownGraceMs?: number;
  /** Limit for reaching Redis and Slack at start; default 10 s. */
  readonly startTimeoutMs?: number;
  /**
   * Runs the listeners on a receiver of the caller's instead of HTTP or Socket Mode: `gpuops demo`'s
   * terminal chat. /healthz, /readyz and /metrics are then served on OPS_PORT as in every mode.
   */
  readonly listener?: ListenerFactory;
  /** How often the cloud, platform and metrics APIs are checked again after start-up; default 30 s. */
  readonly dependencyCheckEveryMs?: number;
  /** A policy already loaded, in place of reading GPUOPS_POLICY (the end-to-end tests). */
  readonly policy?: Policy;
}

/** The assembled parts, for tests that look inside the bot they drive: never needed to run it. */
export interface BotParts {
  readonly store: Store;
  readonly queue: GpuQueue;
  readonly sealer: Sealer;
  readonly guardrails: Guardrails;
  /** The channels' bindings kept in the process (not on a Redis Cluster). */
  readonly bindings: BindingCache | undefined;
  /** The watchers' worker, queue and what they run with: the worker role only. */
  readonly watch: Pick<StartedWorkers, 'watchWorker' | 'watchQueue' | 'watchDeps'> | undefined;
  /** The request jobs' worker (the worker role only): a test pauses it to hand a job to another process. */
  readonly requestWorker: StartedWorkers['worker'] | undefined;
}

export interface RunningBot {
  readonly role: Role;
  /** PORT as bound: /slack/events and /healthz in HTTP mode; the operations port where no Slack port opens. */
  readonly port: number;
  /** OPS_PORT as bound: /healthz, /readyz, /metrics (never on the public port). */
  readonly opsPort: number;
  readonly metrics: BotMetrics;
  readonly botUserId: string;
  readonly parts: BotParts;
  /** What SIGTERM does: stop taking requests and jobs, finish or release jobs in hand, close everything. */
  stop(): Promise<void>;
}

export const DEFAULT_SHUTDOWN_GRACE_MS = 20_000;
const DEFAULT_START_TIMEOUT_MS = 10_000;
const DEFAULT_DEPENDENCY_CHECK_EVERY_MS = 30_000;

/** The dependencies' states as /readyz reads them on each request. */
function report(health: DependencyHealth): () => ReturnType<DependencyHealth['report']> {
  return () => health.report();
}

export async function startBot(config: Config, options: BotOptions = {}): Promise<RunningBot> {
  const role = options.role ?? config.ROLE;
  const web = role !== 'worker';
  const working = role !== 'web';
  const socketMode = web && config.SLACK_SOCKET_MODE;
  const log = options.log ?? createLogger({ level: config.LOG_LEVEL });
  const startTimeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  const metrics = createBotMetrics({
    info: { role, shape: config.CLOUD_API_SHAPE, mode: socketMode ? 'socket' : 'http' },
  });
  const lifecycle = new Lifecycle(log);
  let shuttingDown = false;
  try {
    // 1. Policy: an invalid file stops the start with its line and rule (docs/policy.md).
    const policy = options.policy ?? (await loadPolicy(config.GPUOPS_POLICY));
    log.info({ policy: policy.source }, 'policy loaded');
    const undecided = noDeciderWarning(policy);
    if (undecided) log.warn({ policy: policy.source }, undecided);

    // Traces, when OTEL_EXPORTER_OTLP_ENDPOINT is set: opened first, so closed last with every span sent.
    const tracing = await startTracing(config, log);
    if (tracing) lifecycle.opened('tracing', () => tracing.shutdown());

    // 2. Redis: the store and the queue, failing fast so the listener still answers in time.
    const target = redisTargetOf(config);
    const connect = redisConnector(target, lifecycle, log, startTimeoutMs);
    const storeRedis = await connect('store', FAIL_FAST);
    // The channels' bindings kept in the process, kept true by Redis' invalidations (one connection
    // more). Not on a Cluster: the invalidations would need a connection to every primary.
    const bindings = target.cluster
      ? undefined
      : trackBindings({
          redis: storeRedis,
          invalidations: await connect('invalidations', INVALIDATIONS),
          log,
        });
    const store = createStore(storeRedis, target.cluster ? CLUSTER_STORE_PREFIX : undefined, {
      ...(bindings ? { bindings } : {}),
    });
    // A full Redis must refuse new requests, not evict accepted ones (docs/operations.md).
    const evictionPolicy = await evictionPolicyOf(storeRedis);
    const evicts = evictionWarning(evictionPolicy);
    if (evicts) log.warn({ maxmemoryPolicy: evictionPolicy }, evicts);
    const queueRedis = await connect('queue', FAIL_FAST);
    // Form secrets (user data, kubeconfigs) travel sealed in Redis, never in job data.
    const sealer = createSealer(store.redis, store.prefix, sealKeyFrom(config));
    const derivedKey = sealKeyWarning(config);
    if (derivedKey) log.warn(derivedKey);
    const queue = createQueue(queueRedis, undefined, tracing?.telemetry);
    queue.on('error', () => {}); // the connection's own listener reports it
    lifecycle.opened('queue', () => queue.close());
    metrics.watchQueue(() => queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized'));

    // 3. Slack: the bot token checked once; every Slack client counts Slack's errors.
    const bot = await checkBotToken(config, startTimeoutMs);
    const countedFetch = countSlackErrors((method, error) => metrics.slackApiError(method, error));
    const slackFetch = tracing ? traceSlackCalls(countedFetch) : countedFetch;

    // 4. Guardrails, shared by listener and workers.
    const guardrails = createGuardrails({ config, policy, store, metrics, slackFetch, log });
    const routes = resolveRoutes(
      config.CLOUD_API_SHAPE,
      parseRouteOverrides(config.CLOUD_ROUTES, (path) => readFileSync(path, 'utf8')),
    );

    // 5. Workers and watchers, with the cloud clients: only where jobs run.
    let started: StartedWorkers | undefined;
    let health: DependencyHealth | undefined;
    // Where the cloud client is, the listener's Home tabs read unwatched projects through it too.
    let readMachines: MachineReader | undefined;
    let firstCheck: Promise<void> = Promise.resolve();
    if (working) {
      const { health: checks, ...clients } = createCloudClients(config, routes, metrics, lifecycle, log);
      // Each API checked once while the rest starts: one that does not answer is a warning naming
      // the setting to check, not a failed start (the listener can still answer; jobs retry).
      health = checks;
      firstCheck = checks.checkAll();
      readMachines = cloudMachineReader(clients.cloud, store, log);
      // BullMQ's blocking commands need a connection that never gives up on a request.
      const workerRedis = await connect('worker', BLOCKING);
      started = await startWorkers({
        ...{ config, clients, store, sealer, queue, queueRedis, workerRedis, guardrails, metrics },
        ...{ slackFetch, lifecycle, log, tuning: options, botUserId: bot.botUserId, routes },
        telemetry: tracing?.telemetry,
        botTeamId: bot.teamId,
      });
    }

    // 6. Receivers: probes, and Slack over HTTP, Socket Mode or the caller's receiver.
    const receivers = await startReceivers({
      ...{ config, web, socketMode, host: options.host ?? '0.0.0.0', bot, store, queue, queueRedis, sealer },
      ...{ guardrails, routes, metrics, slackFetch, listener: options.listener, startTimeoutMs },
      ...{ shuttingDown: () => shuttingDown, lifecycle, log, evictionPolicy },
      runWithinMs: options.approvedRunWithinMs,
      ...(health ? { dependencies: report(health) } : {}),
      ...(readMachines ? { readMachines } : {}),
    });
    await firstCheck;
    health?.start(options.dependencyCheckEveryMs ?? DEFAULT_DEPENDENCY_CHECK_EVERY_MS);
    const dependencies = Object.fromEntries((health?.report() ?? []).map((d) => [d.name, d.state]));
    log.info(
      {
        role,
        port: receivers.port,
        opsPort: receivers.opsPort,
        socketMode,
        shape: config.CLOUD_API_SHAPE,
        dependencies,
      },
      'gpuops ready',
    );

    // Stop: Slack first (no new requests), then the worker's jobs, then the rest newest first.
    const graceMs = options.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS;
    let stopping: Promise<void> | undefined;
    const stop = () => {
      stopping ??= (async () => {
        shuttingDown = true;
        log.info({ role }, 'stopping: no new requests or jobs');
        await receivers
          .stopSlack?.()
          .catch((err: unknown) => log.warn({ err }, 'could not stop the Slack receiver'));
        if (started) await drainWorker(started.worker, graceMs, log);
        lifecycle.forget('slack', 'worker');
        await lifecycle.closeAll();
        log.info({ role }, 'stopped');
      })();
      return stopping;
    };
    return {
      role,
      port: receivers.port,
      opsPort: receivers.opsPort,
      metrics,
      botUserId: bot.botUserId,
      parts: {
        ...{ store, queue, sealer, guardrails, bindings },
        watch: started && {
          watchWorker: started.watchWorker,
          watchQueue: started.watchQueue,
          watchDeps: started.watchDeps,
        },
        requestWorker: started?.worker,
      },
      stop,
    };
  } catch (err) {
    await lifecycle.closeAll();
    throw err;
  }
}
