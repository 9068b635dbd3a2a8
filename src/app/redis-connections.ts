import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { AppError, ErrorCode } from '../errors.js';
import { type Logger, redactText } from '../log/logger.js';
import { type Lifecycle, StartError, within } from './lifecycle.js';

// The three Redis connections, each with the behaviour its user needs: the store and the queue fail
// fast when Redis is away (so the listener still answers in time); BullMQ's blocking worker
// connection never gives up on a request.

/** What differs between the connections. */
export interface ConnectionBehaviour {
  readonly maxRetriesPerRequest: number | null;
  readonly enableOfflineQueue?: boolean;
  readonly commandTimeout?: number;
  readonly autoResendUnfulfilledCommands?: boolean;
  readonly autoResubscribe?: boolean;
  readonly protocol?: 2 | 3;
}

export const FAIL_FAST: ConnectionBehaviour = {
  maxRetriesPerRequest: 1,
  enableOfflineQueue: false,
  commandTimeout: 2_000,
  // A command cut off by a dropped connection is failed, not sent again after the reconnect: the
  // person was already told it did not happen, so it must not happen seconds later.
  autoResendUnfulfilledCommands: false,
};
export const BLOCKING: ConnectionBehaviour = { maxRetriesPerRequest: null };
/**
 * The binding cache's invalidation connection (src/store/binding-cache.ts): it subscribes again itself
 * after each reconnect, once it has its new client id, so ioredis must not do it first. RESP2: Redis
 * then sends the invalidations as Pub/Sub messages on `__redis__:invalidate`, which ioredis hands on
 * (over RESP3, ioredis' default, they come as `invalidate` pushes, which ioredis 6 drops).
 */
export const INVALIDATIONS: ConnectionBehaviour = { ...FAIL_FAST, autoResubscribe: false, protocol: 2 };

/** The Redis URL without user or password, for messages. */
export function safeRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return 'REDIS_URL';
  }
}

export type Connect = (name: string, behaviour: ConnectionBehaviour) => Promise<Redis>;

/** ioredis' options without `replyMapping`, which its constructor types cannot take as optional. */
type Options = Omit<RedisOptions, 'replyMapping'>;

/** Where Redis is: one server (REDIS_URL), a primary found through Sentinel, or a Redis Cluster. */
export interface RedisTarget {
  /** For messages: no password. */
  readonly describe: string;
  /** What to check when it cannot be reached. */
  readonly settings: string;
  readonly options: Options;
  /** Redis Cluster: the nodes to start from (`options` then apply to every node). */
  readonly cluster?: ReadonlyArray<{ readonly host: string; readonly port: number }>;
}

/** `host:port,host:port` as ioredis takes them. */
function hostPorts(list: string): Array<{ host: string; port: number }> {
  return list.split(',').map((pair) => {
    const [host, port] = pair.trim().split(':');
    return { host: host!, port: Number(port) };
  });
}

/** The settings' Redis: REDIS_URL alone, REDIS_SENTINELS with REDIS_SENTINEL_MASTER, or REDIS_CLUSTER_NODES. */
export function redisTargetOf(config: {
  readonly REDIS_URL: string;
  readonly REDIS_SENTINELS?: string | undefined;
  readonly REDIS_SENTINEL_MASTER?: string | undefined;
  readonly REDIS_SENTINEL_PASSWORD?: string | undefined;
  readonly REDIS_CLUSTER_NODES?: string | undefined;
}): RedisTarget {
  const url = new URL(config.REDIS_URL);
  const auth: Options = {
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(url.pathname.length > 1 ? { db: Number(url.pathname.slice(1)) || 0 } : {}),
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
  };
  if (config.REDIS_CLUSTER_NODES) {
    // A cluster has one database: REDIS_URL's index does not apply.
    const { db: _db, ...nodeAuth } = auth;
    return {
      describe: `the Redis Cluster at ${config.REDIS_CLUSTER_NODES}`,
      settings: 'REDIS_CLUSTER_NODES (and the password in REDIS_URL)',
      options: nodeAuth,
      cluster: hostPorts(config.REDIS_CLUSTER_NODES),
    };
  }
  if (!config.REDIS_SENTINELS || !config.REDIS_SENTINEL_MASTER) {
    return {
      describe: safeRedisUrl(config.REDIS_URL),
      settings: 'REDIS_URL',
      options: { host: url.hostname || '127.0.0.1', port: Number(url.port) || 6379, ...auth },
    };
  }
  const sentinels = hostPorts(config.REDIS_SENTINELS);
  return {
    describe: `the primary "${config.REDIS_SENTINEL_MASTER}" of the sentinels ${config.REDIS_SENTINELS}`,
    settings: 'REDIS_SENTINELS, REDIS_SENTINEL_MASTER and REDIS_SENTINEL_PASSWORD',
    options: {
      sentinels,
      name: config.REDIS_SENTINEL_MASTER,
      ...(config.REDIS_SENTINEL_PASSWORD ? { sentinelPassword: config.REDIS_SENTINEL_PASSWORD } : {}),
      // No `failoverDetector`: in ioredis its +switch-master subscription outlives the connection it
      // was made for, and a failover announced while the client is asking the sentinels for the
      // primary ends the client for good ("Connection is closed." on every command, BullMQ's
      // duplicates too), so a store or worker connection never came back after the primary was
      // killed. The client needs no announcement: a dead primary drops its connections, and Sentinel
      // disconnects the clients of every server it reconfigures; each reconnect asks the sentinels
      // again. Reconnecting at least once a second (ioredis' default backs off to 5 s) follows the
      // promotion within a second of it.
      retryStrategy: reconnectEverySecond,
      ...auth,
    },
  };
}

/** Reconnects at once, then at least once a second: a failover is followed within a second. */
function reconnectEverySecond(times: number): number {
  return Math.min(times * 100, 1_000);
}

/**
 * A Redis Cluster client with a connection's behaviour. Typed as `Redis`: gpuops uses only commands
 * both share, every multi-key command and script of it touches one hash tag (docs/operations.md), and
 * the one command that needs a node (WAIT) asks for it (src/jobs/replicated.ts).
 */
function clusterClient(
  nodes: NonNullable<RedisTarget['cluster']>,
  options: Options,
  name: string,
  behaviour: ConnectionBehaviour,
): Redis {
  const { enableOfflineQueue, ...perNode } = behaviour;
  // A killed primary's slots move to its replica after cluster-node-timeout (15 s by default). The
  // blocking connection asks again every 200 ms for up to a minute, since BullMQ's worker stops
  // fetching jobs for good when a blocking command fails with "Too many Cluster redirections"; a
  // fail-fast one fails the command at once, as on one server.
  // No ready check on the blocking one: a check failed mid-failover leaves the connect() BullMQ awaits
  // unsettled, and the worker never fetched again (docs/reliability.md, "Findings").
  const failFast = enableOfflineQueue === false;
  const retryMs = failFast ? 0 : 200;
  return new Cluster([...nodes], {
    lazyConnect: true,
    ...(enableOfflineQueue !== undefined ? { enableOfflineQueue } : {}),
    clusterRetryStrategy: reconnectEverySecond,
    retryDelayOnFailover: retryMs,
    retryDelayOnClusterDown: retryMs,
    retryDelayOnTryAgain: retryMs,
    ...(failFast ? {} : { maxRedirections: 300, enableReadyCheck: false }),
    redisOptions: {
      ...options,
      connectionName: `gpuops-${name}`,
      // BullMQ's blocking fetch waits at most 10 s: one unanswered for 15 s went to a dead primary.
      ...(failFast ? {} : { commandTimeout: 15_000 }),
      ...perNode,
    },
  }) as unknown as Redis;
}

/**
 * Connects a cluster client to every node (replicas too, for the one a failover promotes) before first
 * use: without an offline queue ioredis fails a command for a node still connecting, which failed the
 * first commands after start, scheduling the watchers among them (docs/reliability.md, "Findings").
 */
async function connectEveryNode(redis: Redis, timeoutMs: number): Promise<void> {
  const nodes = (redis as unknown as Cluster).nodes('all');
  const pinged = Promise.allSettled(nodes.map((node) => node.ping()));
  await within(pinged, timeoutMs, () => new Error('no answer')).catch(() => {});
}

/** Opens named connections to `target`, each closed by the lifecycle, each outage logged once. */
export function redisConnector(
  target: RedisTarget,
  lifecycle: Lifecycle,
  log: Logger,
  startTimeoutMs: number,
): Connect {
  return async (name, behaviour) => {
    const options: Options = {
      ...target.options,
      lazyConnect: true,
      connectionName: `gpuops-${name}`,
      ...behaviour,
    };
    const redis = target.cluster
      ? clusterClient(target.cluster, target.options, name, behaviour)
      : new Redis(options);
    let down = false;
    redis.on('error', (err) => {
      // ioredis retries forever and reports each try: say it once per outage.
      if (down) return;
      down = true;
      log.warn({ err, connection: name }, 'Redis connection lost; retrying');
    });
    redis.on('ready', () => {
      if (down) log.info({ connection: name }, 'Redis connection back');
      down = false;
    });
    lifecycle.opened(`redis ${name}`, async () => {
      await within(redis.quit(), 1_000, () => new Error('quit timed out')).catch(() => {});
      redis.disconnect();
    });
    try {
      await within(redis.connect(), startTimeoutMs, () => new Error(`no answer within ${startTimeoutMs} ms`));
    } catch (err) {
      throw new StartError(
        `Could not reach Redis at ${target.describe} (${redactText((err as Error).message)}): check ${target.settings} and that Redis is running.`,
        err,
      );
    }
    if (target.cluster) await connectEveryNode(redis, startTimeoutMs);
    return redis;
  };
}

/**
 * Redis' maxmemory-policy, or undefined where Redis does not tell (managed services may disable
 * CONFIG). Anything but `noeviction` lets Redis drop queue keys when full, losing accepted requests.
 */
export async function evictionPolicyOf(redis: Redis): Promise<string | undefined> {
  try {
    const reply = (await within(
      redis.config('GET', 'maxmemory-policy'),
      2_000,
      () => new Error('no answer'),
    )) as string[] | undefined;
    return reply?.[1];
  } catch {
    return undefined;
  }
}

/** The start-up warning for a maxmemory-policy other than noeviction, if any. */
export function evictionWarning(policy: string | undefined): string | undefined {
  if (policy === undefined || policy === 'noeviction') return undefined;
  return `Redis evicts keys when full (maxmemory-policy ${policy}): it could drop queued requests gpuops has acknowledged. Set maxmemory-policy noeviction, so that a full Redis refuses new requests instead (docs/operations.md).`;
}

/**
 * One connection for a command-line tool (`gpuops audit export`, `gpuops spend export`): no retries,
 * connected before it returns, or one sentence naming the setting to check. `clustered` tells the
 * caller to use the store's hash-tagged prefix (docs/operations.md).
 */
export async function connectOnce(
  config: Parameters<typeof redisTargetOf>[0],
): Promise<{ readonly redis: Redis; readonly clustered: boolean }> {
  const target = redisTargetOf(config);
  const once = { maxRetriesPerRequest: 1, connectTimeout: 5_000 };
  const redis = target.cluster
    ? (new Cluster([...target.cluster], {
        lazyConnect: true,
        clusterRetryStrategy: () => null,
        redisOptions: { ...target.options, ...once },
      }) as unknown as Redis)
    : new Redis({ ...target.options, ...once, lazyConnect: true, retryStrategy: () => null });
  redis.on('error', () => {});
  try {
    await redis.connect();
  } catch (err) {
    redis.disconnect();
    throw new AppError(
      ErrorCode.Config,
      `Could not reach Redis at ${target.describe} (${redactText((err as Error).message)}): check ${target.settings} and that Redis is running.`,
    );
  }
  return { redis, clustered: target.cluster !== undefined };
}
