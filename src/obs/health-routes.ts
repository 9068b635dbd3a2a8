import type { IncomingMessage, ServerResponse } from 'node:http';
import { redactText } from '../log/logger.js';
import type { BotMetrics } from './bot-metrics.js';
import { type DependencyStatus, isDegraded } from './dependency-health.js';

// GET /healthz, /readyz and /metrics. The same handlers serve as Bolt custom routes (HTTP mode) and
// on a small node:http server (Socket Mode, worker role), so every role answers them alike.

export interface HttpRoute {
  readonly path: string;
  readonly method: string[];
  readonly handler: (req: IncomingMessage, res: ServerResponse) => void;
}

export interface ProbeDeps {
  /** Resolves when Redis answers PING. */
  readonly redisPing: () => Promise<unknown>;
  /** Resolves when the queue's keys can be read. */
  readonly queueCheck: () => Promise<unknown>;
  readonly metrics: BotMetrics;
  /** True once SIGTERM arrived: not ready, so a load balancer stops sending work. */
  readonly shuttingDown: () => boolean;
  /**
   * The APIs gpuops calls (cloud, platform, metrics) as last checked, where this process calls them.
   * One that does not answer makes /readyz "degraded" with 200: the listener still answers people.
   */
  readonly dependencies?: () => readonly DependencyStatus[];
  /**
   * Redis' maxmemory-policy as read at start: shown, and anything but noeviction makes /readyz
   * "degraded" (a full Redis could evict accepted requests).
   */
  readonly redisEvictionPolicy?: string;
  /**
   * On a replicated Redis (Sentinel, Cluster): why no change can be stored now (no replica), else
   * undefined. /readyz then names the mode: `normal`, or `degraded` (lookups answered, changes
   * refused, approvals kept for the sweeper) with why.
   */
  readonly replication?: () => Promise<string | undefined>;
  /** Per check; default 1000 ms. */
  readonly timeoutMs?: number;
}

/** /readyz's reason for degraded mode: the cause, and what gpuops does meanwhile. */
export function degradedModeReason(why: string): string {
  return `Degraded mode: ${why}. Lookups are answered; changes are refused; approvals decided meanwhile are kept and run once a replica is back (or lapse with a message).`;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(text);
}

async function check(probe: () => Promise<unknown>, ms: number, what: string): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
      }),
    ]);
    return undefined;
  } catch (err) {
    return redactText((err as Error)?.message ?? String(err));
  } finally {
    clearTimeout(timer);
  }
}

/**
 * What /readyz answers now: 200 ready or degraded, 503 unavailable (Redis or the queue does not
 * answer, or a shutdown started). gpuops_ready reads the same at each scrape.
 */
export async function readiness(
  deps: ProbeDeps,
): Promise<{ status: 200 | 503; body: Record<string, unknown> }> {
  const ms = deps.timeoutMs ?? 1_000;
  if (deps.shuttingDown()) {
    return { status: 503, body: { status: 'unavailable', reason: 'gpuops is shutting down.' } };
  }
  const [redis, queue] = await Promise.all([
    check(deps.redisPing, ms, 'Redis'),
    check(deps.queueCheck, ms, 'The queue'),
  ]);
  const dependencies = deps.dependencies?.() ?? [];
  const checks: Record<string, string> = { redis: redis ?? 'ok', queue: queue ?? 'ok' };
  for (const d of dependencies) checks[d.name] = d.state;
  if (redis !== undefined || queue !== undefined) {
    const reason =
      redis !== undefined
        ? `Redis does not answer PING (${redis}); check REDIS_URL and that Redis is running.`
        : `The queue in Redis cannot be read (${queue}).`;
    return { status: 503, body: { status: 'unavailable', reason, checks } };
  }
  const policy = deps.redisEvictionPolicy;
  if (policy) checks.redis_maxmemory_policy = policy;
  const shortage = deps.replication
    ? await Promise.race([
        deps.replication().catch(() => undefined),
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms).unref()),
      ])
    : undefined;
  const mode = deps.replication ? { mode: shortage ? 'degraded' : 'normal' } : {};
  const reasons = [
    ...(shortage ? [degradedModeReason(shortage)] : []),
    ...dependencies.filter((d) => isDegraded(d.state)).map((d) => d.reason ?? `${d.name}: ${d.state}`),
  ];
  if (policy && policy !== 'noeviction') {
    reasons.push(
      `Redis evicts keys when full (maxmemory-policy ${policy}); set noeviction so that a full Redis refuses new requests instead of dropping queued ones.`,
    );
  }
  if (reasons.length === 0) {
    return { status: 200, body: { status: 'ready', ...mode, checks } };
  }
  // Still ready: requests are taken and answered; those that need the API wait and retry.
  const reason = reasons.join(' ');
  return { status: 200, body: { status: 'degraded', ...mode, reason, checks } };
}

export function healthRoutes(deps: ProbeDeps): HttpRoute[] {
  return [
    {
      path: '/healthz',
      method: ['GET'],
      // Alive while the process runs: Redis trouble is /readyz's business, not a reason to restart.
      handler: (_req, res) => sendJson(res, 200, { status: 'ok' }),
    },
    {
      path: '/readyz',
      method: ['GET'],
      handler: (_req, res) => {
        readiness(deps)
          .then(({ status, body }) => sendJson(res, status, body))
          .catch(() => {
            if (!res.headersSent)
              sendJson(res, 503, { status: 'unavailable', reason: 'readiness check failed' });
          });
      },
    },
    {
      path: '/metrics',
      method: ['GET'],
      handler: (_req, res) => {
        deps.metrics
          .render()
          .then(({ contentType, body }) => {
            res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
            res.end(body);
          })
          .catch((err: unknown) => {
            res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
            res.end(
              `# metrics could not be collected: ${redactText(String((err as Error)?.message ?? err))}\n`,
            );
          });
      },
    },
  ];
}
