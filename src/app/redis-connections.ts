import { Redis } from 'ioredis';
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

/** Opens named connections to `redisUrl`, each closed by the lifecycle, each outage logged once. */
export function redisConnector(
  redisUrl: string,
  lifecycle: Lifecycle,
  log: Logger,
  startTimeoutMs: number,
): Connect {
  return async (name, behaviour) => {
    const redis = new Redis(redisUrl, { lazyConnect: true, connectionName: `gpuops-${name}`, ...behaviour });
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
        `Could not reach Redis at ${safeRedisUrl(redisUrl)} (${redactText((err as Error).message)}): check REDIS_URL and that Redis is running.`,
        err,
      );
    }
    return redis;
  };
}
