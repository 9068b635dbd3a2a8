import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staticToken } from '../../../src/cloud/token-provider.js';
import { metricsTokenProvider } from '../../../src/metrics/metrics-auth.js';
import { createMetricsClient } from '../../../src/metrics/metrics-client.js';
import { MetricsError } from '../../../src/metrics/metrics-error.js';
import {
  matrixDataSchema,
  queryDataSchema,
  seriesListSchema,
  stringListSchema,
} from '../../../src/metrics/prometheus-schemas.js';
import {
  type MetricsStack,
  startMetricsStack,
  TEST_INSTANCES,
  waitForSeries,
} from '../../support/metrics-stack.js';

// One real Prometheus for the whole file (startup and the first scrape take ~6 s on Prometheus 2.42).
let stack: MetricsStack;
let prometheusUrl: string;

beforeAll(async () => {
  stack = await startMetricsStack();
  expect(stack.metrics.available, stack.metrics.reason).toBe(true);
  prometheusUrl = stack.metrics.prometheusUrl!;
  await waitForSeries(prometheusUrl, 'DCGM_FI_DEV_GPU_UTIL', 10);
});

afterAll(async () => {
  await stack?.close();
});

/** A metrics client on OAuth client credentials for the metrics audience; `now` is its own clock. */
function oauthClient(now?: () => number) {
  return createMetricsClient({
    baseUrl: stack.metricsUrl,
    tokens: metricsTokenProvider({
      metricsUrl: stack.metricsUrl,
      clientId: stack.clientId,
      clientSecret: stack.clientSecret,
      authUrl: stack.authUrl,
      ...(now ? { now } : {}),
    }),
  });
}

async function raw(url: string, headers: Record<string, string> = {}) {
  const res = await request(url, { headers });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

describe('metrics gateway in front of a real Prometheus', () => {
  it('serves every GPU of every running instance with the static API key', async () => {
    const client = createMetricsClient({ baseUrl: stack.metricsUrl, tokens: staticToken(stack.apiKey) });
    const answer = await client.query('DCGM_FI_DEV_GPU_UTIL');
    expect(answer.data.resultType).toBe('vector');
    if (answer.data.resultType !== 'vector') return;
    const result = answer.data.result;
    expect(result).toHaveLength(10); // 8 GPUs of train-1, 2 of idle-notebook
    const train = result.filter((s) => s.metric.instance_id === TEST_INSTANCES[0]!.id);
    const idle = result.filter((s) => s.metric.instance_name === 'idle-notebook');
    expect(train.map((s) => s.metric.gpu).sort()).toEqual(['0', '1', '2', '3', '4', '5', '6', '7']);
    for (const s of train) {
      expect(s.value).toBeGreaterThanOrEqual(70);
      expect(s.metric).toMatchObject({ Hostname: 'train-1', modelName: 'NVIDIA H100 80GB HBM3' });
      expect(s.metric.UUID).toMatch(/^GPU-[0-9a-f]{8}-/);
    }
    for (const s of idle) expect(s.value).toBeLessThanOrEqual(2);
  });

  it('serves them with an OAuth client-credentials JWT for the metrics audience', async () => {
    const issuedBefore = stack.tokens.issued;
    const client = oauthClient();
    const answer = await client.query('count(DCGM_FI_DEV_POWER_USAGE)');
    expect(answer.data).toMatchObject({ resultType: 'vector', result: [{ value: 10 }] });
    expect(stack.tokens.issued).toBe(issuedBefore + 1);
  });

  it('answers 401 to a wrong key, no key, an expired token and a token for another audience', async () => {
    const url = `${stack.metricsUrl}/api/v1/query?query=up`;
    const nowS = Math.floor(stack.tokens.now() / 1000);
    const cases: Record<string, Record<string, string>> = {
      'wrong key': { authorization: 'Bearer not-the-key' },
      'no header': {},
      expired: { authorization: `Bearer ${stack.tokens.sign({ aud: stack.audience, exp: nowS - 10 })}` },
      'other audience': {
        authorization: `Bearer ${stack.tokens.sign({ aud: 'https://cloud.example.com', exp: nowS + 3600 })}`,
      },
    };
    for (const [name, headers] of Object.entries(cases)) {
      const res = await raw(url, headers);
      expect(res.status, name).toBe(401);
      expect(res.body, name).toMatchObject({ status: 'error', errorType: 'unauthorized' });
    }
  });

  it('tells the user to check the key when it is refused, after exactly one retry', async () => {
    const client = createMetricsClient({ baseUrl: stack.metricsUrl, tokens: staticToken('wrong') });
    const before = stack.gatewayRequests.length;
    const err = await client.query('up').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MetricsError);
    expect((err as MetricsError).errorType).toBe('unauthorized');
    expect((err as MetricsError).message).toContain('METRICS_API_KEY');
    expect(stack.gatewayRequests.length - before).toBe(2);
  });

  it('returns for all four operations exactly what Prometheus returned', async () => {
    const client = createMetricsClient({ baseUrl: stack.metricsUrl, tokens: staticToken(stack.apiKey) });
    const auth = { authorization: `Bearer ${stack.apiKey}` };
    const at = Math.floor(Date.now() / 1000) - 2;
    const calls = [
      {
        path: `/api/v1/query?query=${encodeURIComponent('DCGM_FI_DEV_GPU_TEMP')}&time=${at}`,
        schema: queryDataSchema,
        viaClient: () => client.query('DCGM_FI_DEV_GPU_TEMP', { time: at }),
      },
      {
        path: `/api/v1/query_range?query=${encodeURIComponent('DCGM_FI_DEV_FB_USED')}&start=${at - 4}&end=${at}&step=1`,
        schema: matrixDataSchema,
        viaClient: () => client.queryRange('DCGM_FI_DEV_FB_USED', { start: at - 4, end: at, step: 1 }),
      },
      {
        path: `/api/v1/label/instance_name/values?start=${at - 60}&end=${at}`,
        schema: stringListSchema,
        viaClient: () => client.labelValues('instance_name', { start: at - 60, end: at }),
      },
      {
        path: `/api/v1/series?${new URLSearchParams({ 'match[]': 'DCGM_FI_DEV_GPU_UTIL{instance_name="train-1"}', start: String(at - 60), end: String(at) })}`,
        schema: seriesListSchema,
        viaClient: () =>
          client.series(['DCGM_FI_DEV_GPU_UTIL{instance_name="train-1"}'], { start: at - 60, end: at }),
      },
    ];
    for (const call of calls) {
      const direct = await raw(`${prometheusUrl}${call.path}`);
      const gateway = await raw(`${stack.metricsUrl}${call.path}`, auth);
      expect(direct.status, call.path).toBe(200);
      expect(gateway, call.path).toEqual(direct);
      const parsed = call.schema.parse(direct.body.data);
      expect((await call.viaClient()).data, call.path).toEqual(parsed);
    }
    const names = await client.labelValues('instance_name');
    expect(names.data).toEqual(['idle-notebook', 'train-1']);
  });

  it('sends a long expression as a POST form body and gets the same answer', async () => {
    const client = createMetricsClient({ baseUrl: stack.metricsUrl, tokens: staticToken(stack.apiKey) });
    const at = Math.floor(Date.now() / 1000) - 2;
    const short = 'sum(DCGM_FI_DEV_GPU_UTIL)';
    // The same value, padded past 4000 characters with terms that add zero.
    const long = `${short}${' + 0 * sum(DCGM_FI_DEV_GPU_UTIL)'.repeat(140)}`;
    expect(long.length).toBeGreaterThan(4000);
    const before = stack.gatewayRequests.length;
    const a = await client.query(short, { time: at });
    const b = await client.query(long, { time: at });
    const sent = stack.gatewayRequests.slice(before);
    expect(sent.map((r) => r.method)).toEqual(['GET', 'POST']);
    expect(sent[1]!.url).toBe('/read/api/v1/query');
    expect(b.data).toEqual(a.data);
  });

  it('turns bad PromQL into a MetricsError a person can read', async () => {
    const client = createMetricsClient({ baseUrl: stack.metricsUrl, tokens: staticToken(stack.apiKey) });
    const err = await client.query('sum(DCGM_FI_DEV_GPU_UTIL').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MetricsError);
    const e = err as MetricsError;
    expect(e.errorType).toBe('bad_data');
    expect(e.status).toBe(400);
    expect(e.message).toMatch(/^Prometheus could not parse the query: .*parse error/);
    expect(e.message).not.toContain('\n');
  });

  it('refreshes the OAuth token when it expires', async () => {
    stack.tokens.lifetimeSeconds = 60;
    const before = stack.tokens.issued;
    const client = oauthClient(stack.tokens.now);
    try {
      await client.query('count(DCGM_FI_DEV_GPU_UTIL)');
      await client.query('count(DCGM_FI_DEV_GPU_UTIL)');
      expect(stack.tokens.issued).toBe(before + 1); // cached while valid
      stack.tokens.advance(61_000);
      const answer = await client.query('count(DCGM_FI_DEV_GPU_UTIL)');
      expect(answer.data).toMatchObject({ result: [{ value: 10 }] });
      expect(stack.tokens.issued).toBe(before + 2);
    } finally {
      stack.tokens.lifetimeSeconds = 86_400;
    }
  });

  it('gets a new token and retries once when the server says the cached one expired', async () => {
    stack.tokens.lifetimeSeconds = 60;
    // The client's own clock does not move: only the server sees the token expire.
    const client = oauthClient();
    try {
      await client.query('count(DCGM_FI_DEV_GPU_UTIL)');
      const issued = stack.tokens.issued;
      stack.tokens.advance(61_000);
      const before = stack.gatewayRequests.length;
      const answer = await client.query('count(DCGM_FI_DEV_GPU_UTIL)');
      expect(answer.data).toMatchObject({ result: [{ value: 10 }] });
      expect(stack.tokens.issued).toBe(issued + 1);
      expect(stack.gatewayRequests.length - before).toBe(2);
    } finally {
      stack.tokens.lifetimeSeconds = 86_400;
    }
  });

  it('offers only the read endpoints', async () => {
    const auth = { authorization: `Bearer ${stack.apiKey}` };
    for (const path of ['/api/v1/status/config', '/api/v1/admin/tsdb/snapshot', '/-/ready', '/graph']) {
      const res = await raw(`${stack.metricsUrl}${path}`, auth);
      expect(res.status, path).toBe(404);
      expect(res.body, path).toMatchObject({ status: 'error', errorType: 'not_found' });
    }
    const metadata = await raw(`${stack.metricsUrl}/api/v1/metadata?metric=DCGM_FI_DEV_GPU_UTIL`, auth);
    expect(metadata.body).toMatchObject({
      status: 'success',
      data: { DCGM_FI_DEV_GPU_UTIL: [{ type: 'gauge', help: 'GPU utilization (in %).' }] },
    });
  });

  it('drops an instance from the exporter once it stops running', async () => {
    const res1 = await request(`${stack.baseUrl}/exporter/metrics`);
    const text1 = await res1.body.text();
    expect(text1).toContain('instance_name="idle-notebook"');
    const saved = stack.instances;
    stack.instances = saved.filter((i) => i.name !== 'idle-notebook');
    try {
      const text2 = await (await request(`${stack.baseUrl}/exporter/metrics`)).body.text();
      expect(text2).not.toContain('idle-notebook');
      expect(text2).toContain('gpuops_sim_exporter_gpus 8');
    } finally {
      stack.instances = saved;
    }
  });
});

describe('metrics gateway without Prometheus', () => {
  it('says metrics are unavailable and how to install Prometheus', async () => {
    const bare = await startMetricsStack({ prometheusBinary: '/nonexistent/prometheus' });
    try {
      expect(bare.metrics.available).toBe(false);
      expect(bare.metrics.reason).toContain('apt-get install -y prometheus');
      expect(bare.metrics.reason).toContain('install Prometheus 2.x and put it on PATH');
      const res = await raw(`${bare.metricsUrl}/api/v1/query?query=up`, {
        authorization: `Bearer ${bare.apiKey}`,
      });
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ status: 'error', errorType: 'unavailable' });
      const client = createMetricsClient({ baseUrl: bare.metricsUrl, tokens: staticToken(bare.apiKey) });
      const err = (await client.query('up').catch((e: unknown) => e)) as MetricsError;
      expect(err).toBeInstanceOf(MetricsError);
      expect(err.errorType).toBe('unavailable');
      expect(err.retryable).toBe(true);
      expect(err.message).toContain('apt-get install -y prometheus');
    } finally {
      await bare.close();
    }
  });
});
