import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { type SimMetrics, type SimMetricsInstance, startSimMetrics } from '../../src/sim/metrics/index.js';

// The simulator's metrics side on its own: a real HTTP server on a free loopback port, the exporter and
// gateway from src/sim/metrics, a real Prometheus, and a small OAuth token server issuing HS256 JWTs
// whose lifetime and clock the test controls.

export interface MetricsStack {
  readonly baseUrl: string;
  /** METRICS_URL: ${baseUrl}/read. */
  readonly metricsUrl: string;
  readonly authUrl: string;
  readonly apiKey: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** The audience tokens must carry: the metrics server address, metricsUrl without /read. */
  readonly audience: string;
  readonly metrics: SimMetrics;
  /** Requests that reached the gateway (method and path with query), newest last. */
  readonly gatewayRequests: Array<{ method: string; url: string }>;
  readonly tokens: {
    /** Lifetime of the next tokens issued, seconds. */
    lifetimeSeconds: number;
    issued: number;
    /** Moves the clock the gateway judges expiry by (not the wall clock). */
    advance(ms: number): void;
    now(): number;
    sign(claims: Record<string, unknown>): string;
  };
  instances: SimMetricsInstance[];
  close(): Promise<void>;
}

export const TEST_INSTANCES: SimMetricsInstance[] = [
  {
    id: '3f1c2a9e-8b7d-4c1e-9f2a-1b2c3d4e5f60',
    name: 'train-1',
    type: 'h100-hgx-80gb.8x',
    projectId: '0b6f0c52-4d7a-4f44-9a57-5d7f2f0f7e01',
    gpuCount: 8,
    gpuModel: 'NVIDIA H100 80GB HBM3',
    gpuMemoryGiB: 80,
    maxPowerWatts: 700,
    startedAt: 0,
    load: 'busy',
  },
  {
    id: '9a7b6c5d-4e3f-4a1b-8c2d-0e1f2a3b4c5d',
    name: 'idle-notebook',
    type: 'l40s-48gb.2x',
    projectId: '0b6f0c52-4d7a-4f44-9a57-5d7f2f0f7e01',
    gpuCount: 2,
    gpuModel: 'NVIDIA L40S',
    gpuMemoryGiB: 48,
    maxPowerWatts: 350,
    startedAt: 0,
    load: 'auto',
  },
];

const SECRET = 'metrics-stack-test-secret';

export async function startMetricsStack(
  options: { instances?: SimMetricsInstance[]; prometheusBinary?: string; log?: (line: string) => void } = {},
): Promise<MetricsStack> {
  let offset = 0;
  const now = () => Date.now() + offset;
  const apiKey = 'test-metrics-key';
  const clientId = 'test-client';
  const clientSecret = 'test-secret';
  const gatewayRequests: Array<{ method: string; url: string }> = [];
  let metrics: SimMetrics | undefined;
  let audience = '';

  const sign = (claims: Record<string, unknown>) => {
    const head = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
    const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
    const mac = createHmac('sha256', SECRET).update(`${head}.${body}`).digest('base64url');
    return `${head}.${body}.${mac}`;
  };
  const verifyJwt = (token: string): boolean => {
    const [head, body, mac] = token.split('.');
    if (!head || !body || !mac) return false;
    const expected = createHmac('sha256', SECRET).update(`${head}.${body}`).digest();
    const given = Buffer.from(mac, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as {
      aud?: string;
      exp?: number;
    };
    return claims.aud === audience && typeof claims.exp === 'number' && claims.exp * 1000 > now();
  };

  const stack = {
    tokens: {
      lifetimeSeconds: 86_400,
      issued: 0,
      advance: (ms: number) => {
        offset += ms;
      },
      now,
      sign,
    },
    instances: options.instances ?? TEST_INSTANCES.map((i) => ({ ...i })),
  };

  async function tokenEndpoint(req: IncomingMessage, res: ServerResponse) {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const body = JSON.parse(raw || '{}') as Record<string, unknown>;
    const send = (status: number, payload: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
    };
    if (body.client_id !== clientId || body.client_secret !== clientSecret) {
      send(401, { error: 'invalid_client', error_description: 'unknown client' });
      return;
    }
    if (body.grant_type !== 'client_credentials' || typeof body.audience !== 'string') {
      send(400, { error: 'invalid_request', error_description: 'grant_type and audience are required' });
      return;
    }
    stack.tokens.issued++;
    const iat = Math.floor(now() / 1000);
    const exp = iat + stack.tokens.lifetimeSeconds;
    send(200, {
      access_token: sign({ sub: clientId, aud: body.audience, iat, exp }),
      expires_in: stack.tokens.lifetimeSeconds,
      token_type: 'Bearer',
    });
  }

  const server: Server = createServer((req, res) => {
    void (async () => {
      if (req.url === '/auth/oauth/token' && req.method === 'POST') return tokenEndpoint(req, res);
      if (req.url?.startsWith('/read')) gatewayRequests.push({ method: req.method ?? 'GET', url: req.url });
      if (metrics && (await metrics.handle(req, res))) return;
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"message":"not found"}');
    })().catch((err: unknown) => {
      res.destroy(err as Error);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const baseUrl = `http://127.0.0.1:${port}`;
  audience = baseUrl;
  metrics = await startSimMetrics({
    baseUrl,
    verifyBearer: (token) => token === apiKey || verifyJwt(token),
    runningInstances: () => stack.instances,
    now: Date.now,
    seed: 1,
    log: options.log ?? (() => {}),
    ...(options.prometheusBinary !== undefined ? { prometheusBinary: options.prometheusBinary } : {}),
  });
  const started = metrics;
  return {
    tokens: stack.tokens,
    get instances() {
      return stack.instances;
    },
    set instances(list: SimMetricsInstance[]) {
      stack.instances = list;
    },
    baseUrl,
    metricsUrl: `${baseUrl}/read`,
    authUrl: `${baseUrl}/auth`,
    apiKey,
    clientId,
    clientSecret,
    audience,
    metrics: started,
    gatewayRequests,
    async close() {
      await started.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Polls Prometheus (directly) until `expr` returns at least `count` series; Prometheus 2.42 needs ~6 s. */
export async function waitForSeries(
  prometheusUrl: string,
  expr: string,
  count: number,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let seen = 0;
  while (Date.now() < deadline) {
    const res = await request(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await res.body.json()) as { data?: { result?: unknown[] } };
    seen = body.data?.result?.length ?? 0;
    if (seen >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`Prometheus had ${seen} of ${count} series for ${expr} after ${timeoutMs} ms`);
}
