import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dependencyProbes } from '../../src/app/dependency-probes.js';
import { Lifecycle } from '../../src/app/lifecycle.js';
import { resolveRoutes, staticToken } from '../../src/cloud/index.js';
import { parseConfig } from '../../src/config.js';
import { createLogger } from '../../src/log/logger.js';
import { createBotMetrics } from '../../src/obs/bot-metrics.js';
import { createDependencyHealth } from '../../src/obs/dependency-health.js';
import { healthRoutes } from '../../src/obs/health-routes.js';
import { type RouteServer, startRouteServer } from '../../src/obs/route-server.js';

// The start-up check of the cloud API against a real HTTP server that answers what a misconfigured
// cloud answers: a 401 is "answers, but refuses the credentials" with the settings to check (never
// their values), a 404 is still an API that answers, and a closed port is "did not answer". /readyz
// stays 200 through all of it and says which.

const TOKEN = 'cloud-token-never-logged';
let answer = 401;
let cloud: Server;
let cloudUrl: string;
let probes: RouteServer;
const lines: Record<string, unknown>[] = [];

beforeAll(async () => {
  cloud = createServer((_req, res) => {
    res.writeHead(answer, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'no' }));
  });
  await new Promise<void>((resolve) => cloud.listen(0, '127.0.0.1', resolve));
  cloudUrl = `http://127.0.0.1:${(cloud.address() as AddressInfo).port}/api/v1alpha1`;
});

afterAll(async () => {
  await probes?.close();
  if (cloud.listening) await new Promise<void>((resolve) => cloud.close(() => resolve()));
});

async function readyz() {
  const res = await request(`http://127.0.0.1:${probes.port}/readyz`);
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

describe('the cloud check', () => {
  it('tells a refused credential from an API that does not answer, and /readyz follows', async () => {
    const config = parseConfig({ CLOUD_API_URL: cloudUrl, CLOUD_API_TOKEN: TOKEN, CLOUD_API_SHAPE: 'B' });
    const stream = new PassThrough();
    stream.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
    });
    const log = createLogger({ destination: stream });
    const lifecycle = new Lifecycle(log);
    const health = createDependencyHealth(
      dependencyProbes({
        config,
        routes: resolveRoutes('B', {}),
        cloudTokens: staticToken(TOKEN),
        metricsClient: undefined,
        lifecycle,
      }),
      log,
    );
    probes = await startRouteServer(
      healthRoutes({
        redisPing: async () => 'PONG',
        queueCheck: async () => ({}),
        metrics: createBotMetrics({ defaultMetrics: false }),
        shuttingDown: () => false,
        dependencies: () => health.report(),
      }),
      0,
      '127.0.0.1',
    );
    try {
      await health.checkAll();
      const refused = await readyz();
      expect(refused.status).toBe(200);
      expect(refused.body).toMatchObject({
        status: 'degraded',
        checks: { redis: 'ok', queue: 'ok', cloud: 'refused' },
      });
      expect(String(refused.body.reason)).toMatch(
        /refused gpuops' credentials \(HTTP 401\): check CLOUD_API_TOKEN/,
      );
      const warning = lines.find((l) => l.dependency === 'cloud' && l.state === 'refused');
      expect(warning?.level).toBe('warn');

      // A 404 on the probe: the address answers, so nothing is wrong with reaching it.
      answer = 404;
      await health.checkAll();
      expect(await readyz()).toEqual({
        status: 200,
        body: { status: 'ready', checks: { redis: 'ok', queue: 'ok', cloud: 'ok' } },
      });
      expect(lines.some((l) => l.msg === 'The cloud API answers again')).toBe(true);

      await new Promise<void>((resolve) => cloud.close(() => resolve()));
      await health.checkAll();
      const down = await readyz();
      expect(down.status).toBe(200);
      expect(down.body).toMatchObject({ status: 'degraded', checks: { cloud: 'unreachable' } });
      expect(String(down.body.reason)).toMatch(/did not answer \(ECONNREFUSED\): check CLOUD_API_URL/);
      expect(JSON.stringify(lines)).not.toContain(TOKEN);
    } finally {
      await lifecycle.closeAll();
    }
  });
});
