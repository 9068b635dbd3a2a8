import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientCredentials, staticToken } from '../../../src/cloud/token-provider.js';
import { metricsAudience, metricsTokenProvider } from '../../../src/metrics/metrics-auth.js';
import { createMetricsClient, type MetricsClient } from '../../../src/metrics/metrics-client.js';
import { type RunningSim, startSim } from '../../../src/sim/start-sim.js';
import { runSnapshot } from '../../../src/snapshot/run-snapshot.js';
import { pngHeader } from '../../support/png.js';

// The whole simulator (startSim) with its metrics side and a real Prometheus: instances created through
// the infrastructure API show up as GPU series behind the gateway, with either credential.

let sim: RunningSim;
let dir: string;
const ids: Record<string, string> = {};

async function call(
  method: 'GET' | 'POST' | 'PUT',
  url: string,
  headers: Record<string, string>,
  body?: unknown,
) {
  const res = await request(url, {
    method,
    headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: text ? JSON.parse(text) : undefined };
}

async function waitForGpus(client: MetricsClient, count: number, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  let seen = 0;
  while (Date.now() < deadline) {
    const answer = await client.query('count(DCGM_FI_DEV_GPU_UTIL)');
    seen = answer.data.resultType === 'vector' ? (answer.data.result[0]?.value ?? 0) : 0;
    if (seen >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`saw ${seen} of ${count} GPUs in Prometheus after ${timeoutMs} ms`);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gpuops-sim-metrics-'));
  sim = await startSim({ shape: 'B', clock: 'manual', transitionMs: 1000, metrics: true, log: () => {} });
  expect(sim.info.metricsAvailable, sim.info.metricsNote).toBe(true);
  const cloud = { authorization: `Bearer ${sim.info.cloudToken}`, 'x-project-id': sim.info.projectId };
  for (const [name, type] of [
    ['train-a', 'h100-hgx-80gb.8x'],
    ['notebook', 'l40s-48gb.2x'],
  ] as const) {
    const created = await call('POST', `${sim.info.cloudUrl}/instances`, cloud, { name, type });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    ids[name] = created.json.id;
  }
  await sim.clock.advance(1000);
  await call('PUT', `${sim.info.controlUrl}/instances/${ids.notebook}/load`, {}, { load: 'idle' });
  await call('PUT', `${sim.info.controlUrl}/instances/${ids['train-a']}/load`, {}, { load: 'busy' });
  const client = createMetricsClient({
    baseUrl: sim.info.metricsUrl,
    tokens: staticToken(sim.info.metricsApiKey),
  });
  await waitForGpus(client, 10);
});

afterAll(async () => {
  await sim?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('gpuops sim metrics', () => {
  it('answers the documented curl with the running instances’ series from a real Prometheus', async () => {
    const res = await call('GET', `${sim.info.metricsUrl}/api/v1/query?query=DCGM_FI_DEV_GPU_UTIL`, {
      authorization: `Bearer ${sim.info.metricsApiKey}`,
    });
    expect(res.status).toBe(200);
    expect(res.json.status).toBe('success');
    const result = res.json.data.result as Array<{ metric: Record<string, string>; value: [number, string] }>;
    expect(result).toHaveLength(10);
    const train = result.filter((s) => s.metric.instance_id === ids['train-a']);
    const notebook = result.filter((s) => s.metric.instance_id === ids.notebook);
    expect(train).toHaveLength(8);
    expect(notebook).toHaveLength(2);
    for (const s of train) {
      expect(s.metric).toMatchObject({ instance_name: 'train-a', project_id: sim.info.projectId });
      expect(Number(s.value[1])).toBeGreaterThanOrEqual(70);
    }
    for (const s of notebook) expect(Number(s.value[1])).toBeLessThanOrEqual(2);
  });

  it('reads them with the OAuth client credentials, for the audience the sim announces', async () => {
    expect(metricsAudience(sim.info.metricsUrl)).toBe(sim.info.metricsAudience);
    const client = createMetricsClient({
      baseUrl: sim.info.metricsUrl,
      tokens: metricsTokenProvider({
        metricsUrl: sim.info.metricsUrl,
        clientId: sim.info.clientId,
        clientSecret: sim.info.clientSecret,
        authUrl: sim.info.authUrl,
      }),
    });
    const names = await client.labelValues('instance_name');
    expect(names.data).toEqual(['notebook', 'train-a']);
    const series = await client.series([`DCGM_FI_DEV_POWER_USAGE{instance_id="${ids.notebook}"}`]);
    expect(series.data.map((s) => s.gpu).sort()).toEqual(['0', '1']);
  });

  it('refuses the cloud token and a token for the infrastructure audience', async () => {
    const tokenRes = await call(
      'POST',
      `${sim.info.authUrl}/oauth/token`,
      {},
      {
        client_id: sim.info.clientId,
        client_secret: sim.info.clientSecret,
        audience: sim.info.cloudAudience,
        grant_type: 'client_credentials',
      },
    );
    for (const token of [sim.info.cloudToken, tokenRes.json.access_token as string, 'nonsense']) {
      const res = await call('GET', `${sim.info.metricsUrl}/api/v1/query?query=up`, {
        authorization: `Bearer ${token}`,
      });
      expect(res.status).toBe(401);
      expect(res.json).toMatchObject({ status: 'error', errorType: 'unauthorized' });
    }
  });

  it('refreshes the 24 h token when the simulator clock passes its expiry', async () => {
    const tokens = clientCredentials({
      authUrl: sim.info.authUrl,
      clientId: sim.info.clientId,
      clientSecret: sim.info.clientSecret,
      audience: sim.info.metricsAudience,
      now: sim.clock.now,
    });
    const client = createMetricsClient({ baseUrl: sim.info.metricsUrl, tokens });
    await client.query('count(DCGM_FI_DEV_GPU_UTIL)');
    const first = await tokens.token();
    await sim.clock.advance(86_400_000 + 60_000);
    const answer = await client.query('count(DCGM_FI_DEV_GPU_UTIL)');
    expect(answer.data).toMatchObject({ resultType: 'vector', result: [{ value: 10 }] });
    expect(await tokens.token()).not.toBe(first);
  });

  it('retries once with a new token when the server finds the cached one expired', async () => {
    // This provider's own clock stands still, so only the simulator sees the token expire.
    const tokens = clientCredentials({
      authUrl: sim.info.authUrl,
      clientId: sim.info.clientId,
      clientSecret: sim.info.clientSecret,
      audience: sim.info.metricsAudience,
    });
    const client = createMetricsClient({ baseUrl: sim.info.metricsUrl, tokens });
    await client.query('count(DCGM_FI_DEV_GPU_UTIL)');
    const first = await tokens.token();
    const stale = await call('GET', `${sim.info.metricsUrl}/api/v1/query?query=up`, {
      authorization: `Bearer ${first}`,
    });
    expect(stale.status).toBe(200);
    await sim.clock.advance(86_400_000 + 60_000);
    const expired = await call('GET', `${sim.info.metricsUrl}/api/v1/query?query=up`, {
      authorization: `Bearer ${first}`,
    });
    expect(expired.status).toBe(401);
    const answer = await client.query('count(DCGM_FI_DEV_GPU_UTIL)');
    expect(answer.data).toMatchObject({ result: [{ value: 10 }] });
    expect(await tokens.token()).not.toBe(first);
  });

  it('writes a snapshot PNG of an instance by name with the sim’s settings', async () => {
    const file = join(dir, 'train-a.png');
    const out = { stdout: '', stderr: '' };
    const code = await runSnapshot(
      ['train-a', '--out', file, '--metric', 'power', '--range', '10m'],
      { METRICS_URL: sim.info.metricsUrl, METRICS_API_KEY: sim.info.metricsApiKey },
      {
        stdout: { write: (t: string) => (out.stdout += t) },
        stderr: { write: (t: string) => (out.stderr += t) },
      },
    );
    expect(out.stderr).toBe('');
    expect(code).toBe(0);
    expect(out.stdout).toContain(`train-a (${ids['train-a']!.slice(0, 8)}) · GPU power draw (W)`);
    expect(pngHeader(readFileSync(file))).toEqual({ width: 1000, height: 560 });
  });
});
