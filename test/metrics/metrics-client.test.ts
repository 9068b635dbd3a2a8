import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { staticToken, type TokenProvider } from '../../src/cloud/token-provider.js';
import { ValidationError } from '../../src/errors.js';
import { metricsAudience, metricsTokenProvider } from '../../src/metrics/metrics-auth.js';
import { createMetricsClient } from '../../src/metrics/metrics-client.js';
import { MetricsError } from '../../src/metrics/metrics-error.js';
import { parseSampleValue } from '../../src/metrics/prometheus-schemas.js';

// A fake Prometheus behind /read: a real HTTP server that records what it got and answers what the
// test says. Unexpected paths fail loudly.

interface Received {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
}

type Handler = (req: Received, res: ServerResponse) => void;

let server: Server | undefined;

async function fakePrometheus(handler: Handler) {
  const received: Received[] = [];
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const r = {
        method: req.method ?? '',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body,
      };
      received.push(r);
      handler(r, res);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/read`;
  return { base, received };
}

afterEach(async () => {
  if (server) {
    server.closeAllConnections();
    await new Promise((resolve) => server!.close(resolve));
    server = undefined;
  }
});

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

const ok = (data: unknown, extra: Record<string, unknown> = {}) => ({ status: 'success', data, ...extra });

describe('metrics client', () => {
  it('parses vectors with NaN and infinities as numbers and keeps warnings', async () => {
    const { base } = await fakePrometheus((_req, res) =>
      json(
        res,
        200,
        ok(
          {
            resultType: 'vector',
            result: [
              { metric: { gpu: '0' }, value: [1714557600.5, '93'] },
              { metric: { gpu: '1' }, value: [1714557600.5, 'NaN'] },
              { metric: { gpu: '2' }, value: [1714557600.5, '+Inf'] },
              { metric: { gpu: '3' }, value: [1714557600.5, '-Inf'] },
              { metric: { gpu: '4' }, value: [1714557600.5, '1.5e3'] },
            ],
          },
          {
            warnings: ['partial answer: one store was down'],
            infos: ['PromQL info: metric might not be a counter'],
          },
        ),
      ),
    );
    const client = createMetricsClient({ baseUrl: base, tokens: staticToken('k') });
    const answer = await client.query('DCGM_FI_DEV_GPU_UTIL');
    expect(answer.warnings).toEqual(['partial answer: one store was down']);
    expect(answer.infos).toHaveLength(1);
    expect(answer.data.resultType).toBe('vector');
    const values = answer.data.resultType === 'vector' ? answer.data.result.map((s) => s.value) : [];
    expect(values[0]).toBe(93);
    expect(values[1]).toBeNaN();
    expect(values.slice(2)).toEqual([Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1500]);
  });

  it('parses matrices, scalars and strings', async () => {
    const answers: unknown[] = [
      ok({
        resultType: 'matrix',
        result: [
          {
            metric: { gpu: '0' },
            values: [
              [10, '1'],
              [25, '2.5'],
            ],
          },
        ],
      }),
      ok({ resultType: 'scalar', result: [10, '42'] }),
      ok({ resultType: 'string', result: [10, 'hello'] }),
    ];
    const { base } = await fakePrometheus((_req, res) => json(res, 200, answers.shift()));
    const client = createMetricsClient({ baseUrl: base, tokens: staticToken('k') });
    const range = await client.queryRange('x', { start: 0, end: 30, step: 15 });
    expect(range.data.result[0]!.values).toEqual([
      { time: 10, value: 1 },
      { time: 25, value: 2.5 },
    ]);
    expect((await client.query('42')).data).toEqual({
      resultType: 'scalar',
      result: { time: 10, value: 42 },
    });
    expect((await client.query('"hello"')).data).toEqual({
      resultType: 'string',
      result: { time: 10, value: 'hello' },
    });
  });

  it('sends GET with the bearer, and switches to a POST form body for a long expression', async () => {
    const { base, received } = await fakePrometheus((req, res) =>
      json(res, 200, ok({ resultType: req.path.endsWith('_range') ? 'matrix' : 'vector', result: [] })),
    );
    const client = createMetricsClient({ baseUrl: `${base}/`, tokens: staticToken('secret-key') });
    await client.query('up', { time: new Date(1714557600123), timeout: '10s', limit: 5 });
    const long = `sum(up)${' + sum(up)'.repeat(500)}`;
    await client.query(long, { time: 1714557600 });
    await client.queryRange(long, { start: 1, end: 2, step: '1s' });
    const [get, post, postRange] = received;
    expect(get).toMatchObject({ method: 'GET', path: '/read/api/v1/query' });
    expect(Object.fromEntries(get!.query)).toEqual({
      query: 'up',
      time: '1714557600.123',
      timeout: '10s',
      limit: '5',
    });
    expect(get!.headers.authorization).toBe('Bearer secret-key');
    expect(post).toMatchObject({ method: 'POST', path: '/read/api/v1/query' });
    expect(post!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(post!.body))).toEqual({ query: long, time: '1714557600' });
    expect(postRange).toMatchObject({ method: 'POST', path: '/read/api/v1/query_range' });
    expect(new URLSearchParams(postRange!.body).get('step')).toBe('1s');
  });

  it('asks label values and series with match[] selectors, start, end and limit', async () => {
    const { base, received } = await fakePrometheus((req, res) =>
      json(res, 200, ok(req.path.endsWith('/values') ? ['train-1'] : [{ __name__: 'up', job: 'x' }])),
    );
    const client = createMetricsClient({ baseUrl: base, tokens: staticToken('k') });
    const values = await client.labelValues('instance_name', {
      match: ['{instance_id="a"}', '{instance_id="b"}'],
      start: 100,
      end: 200,
      limit: 10,
    });
    expect(values.data).toEqual(['train-1']);
    const series = await client.series(['up'], { start: new Date(100_000) });
    expect(series.data).toEqual([{ __name__: 'up', job: 'x' }]);
    expect(received[0]).toMatchObject({ method: 'GET', path: '/read/api/v1/label/instance_name/values' });
    expect(received[0]!.query.getAll('match[]')).toEqual(['{instance_id="a"}', '{instance_id="b"}']);
    expect(Object.fromEntries([...received[0]!.query].filter(([k]) => k !== 'match[]'))).toEqual({
      start: '100',
      end: '200',
      limit: '10',
    });
    expect(received[1]).toMatchObject({ method: 'GET', path: '/read/api/v1/series' });
    expect(received[1]!.query.get('start')).toBe('100');
    expect(() => client.series([])).toThrow(ValidationError);
  });

  it('gets a fresh token and retries once after a 401', async () => {
    const { base, received } = await fakePrometheus((req, res) =>
      req.headers.authorization === 'Bearer new'
        ? json(res, 200, ok({ resultType: 'vector', result: [] }))
        : json(res, 401, { status: 'error', errorType: 'unauthorized', error: 'token expired' }),
    );
    const invalidated: string[] = [];
    let current = 'old';
    const tokens: TokenProvider = {
      token: async () => current,
      invalidate: (t) => {
        invalidated.push(t);
        current = 'new';
      },
    };
    const client = createMetricsClient({ baseUrl: base, tokens });
    await client.query('up');
    expect(invalidated).toEqual(['old']);
    expect(received.map((r) => r.headers.authorization)).toEqual(['Bearer old', 'Bearer new']);
  });

  it('gives up after the one retry with a sentence about the credentials, never the token', async () => {
    const { base, received } = await fakePrometheus((_req, res) => {
      res.writeHead(401);
      res.end('Unauthorized');
    });
    const client = createMetricsClient({ baseUrl: base, tokens: staticToken('do-not-print-me') });
    const err = (await client.query('up').catch((e: unknown) => e)) as MetricsError;
    expect(err).toBeInstanceOf(MetricsError);
    expect(err.errorType).toBe('unauthorized');
    expect(err.message).toMatch(/refused the credentials \(HTTP 401\).*METRICS_API_KEY/);
    expect(err.message).not.toContain('do-not-print-me');
    expect(received).toHaveLength(2);
  });

  it("carries Prometheus's errorType and error, and marks the transient ones", async () => {
    const answers: Array<[number, unknown]> = [
      [422, { status: 'error', errorType: 'execution', error: 'many-to-many matching not allowed' }],
      [503, { status: 'error', errorType: 'timeout', error: 'query timed out in expression evaluation' }],
      [400, { status: 'error', errorType: 'bad_data', error: '1:5: parse error: unclosed left parenthesis' }],
      [400, { status: 'error', errorType: 'bad_data', error: 'invalid parameter "start": cannot parse "x"' }],
    ];
    const { base } = await fakePrometheus((_req, res) => {
      const [status, body] = answers.shift()!;
      json(res, status, body);
    });
    const client = createMetricsClient({ baseUrl: base, tokens: staticToken('k') });
    const errors = [];
    for (let i = 0; i < 4; i++)
      errors.push((await client.query('x').catch((e: unknown) => e)) as MetricsError);
    expect(errors.map((e) => [e.errorType, e.status, e.retryable])).toEqual([
      ['execution', 422, false],
      ['timeout', 503, true],
      ['bad_data', 400, false],
      ['bad_data', 400, false],
    ]);
    expect(errors[0]!.error).toBe('many-to-many matching not allowed');
    expect(errors[0]!.message).toBe('Prometheus could not run the query: many-to-many matching not allowed.');
    expect(errors[1]!.message).toMatch(/timed out.*shorter range/);
    expect(errors[2]!.message).toBe(
      'Prometheus could not parse the query: 1:5: parse error: unclosed left parenthesis.',
    );
    expect(errors[3]!.message).toBe(
      'Prometheus rejected the request: invalid parameter "start": cannot parse "x".',
    );
  });

  it('explains answers that are not the Prometheus API', async () => {
    const answers: Array<[number, string]> = [
      [404, '<html>Not Found</html>'],
      [502, '<html>Bad Gateway</html>'],
      [200, JSON.stringify(ok({ result: [] }))],
    ];
    const { base } = await fakePrometheus((_req, res) => {
      const [status, body] = answers.shift()!;
      res.writeHead(status, { 'content-type': 'text/html' });
      res.end(body);
    });
    const client = createMetricsClient({ baseUrl: base, tokens: staticToken('k') });
    const notFound = (await client.query('x').catch((e: unknown) => e)) as MetricsError;
    expect(notFound.errorType).toBe('not_found');
    expect(notFound.message).toContain('METRICS_URL ends in /read');
    const gateway = (await client.query('x').catch((e: unknown) => e)) as MetricsError;
    expect(gateway).toMatchObject({ errorType: 'bad_response', status: 502, retryable: true });
    const shape = (await client.query('x').catch((e: unknown) => e)) as MetricsError;
    expect(shape.errorType).toBe('bad_response');
    expect(shape.message).toContain('/api/v1/query');
  });

  it('times out a silent server and reports an unreachable one', async () => {
    const { base } = await fakePrometheus(() => {
      // never answers
    });
    const slow = createMetricsClient({ baseUrl: base, tokens: staticToken('k'), timeoutMs: 200 });
    const timeout = (await slow.query('up').catch((e: unknown) => e)) as MetricsError;
    expect(timeout).toMatchObject({ errorType: 'timeout', retryable: true });
    expect(timeout.message).toContain('did not answer in time');

    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const down = createMetricsClient({ baseUrl: `http://127.0.0.1:${port}/read`, tokens: staticToken('k') });
    const network = (await down.query('up').catch((e: unknown) => e)) as MetricsError;
    expect(network).toMatchObject({ errorType: 'network', retryable: true });
    expect(network.message).toContain(`http://127.0.0.1:${port}`);
  });

  it('stops when the caller aborts', async () => {
    const { base } = await fakePrometheus(() => {});
    const client = createMetricsClient({ baseUrl: base, tokens: staticToken('k') });
    const controller = new AbortController();
    const pending = client.query('up', { signal: controller.signal });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ errorType: 'canceled' });
  });
});

describe('metrics auth settings', () => {
  it('uses the metrics server address as the audience unless METRICS_AUDIENCE says otherwise', () => {
    expect(metricsAudience('https://metrics.example.com/read')).toBe('https://metrics.example.com');
    expect(metricsAudience('https://metrics.example.com/read/')).toBe('https://metrics.example.com');
    expect(metricsAudience('https://m.example.com/prom/read')).toBe('https://m.example.com/prom');
    expect(metricsAudience('https://metrics.example.com/read', 'api://metrics')).toBe('api://metrics');
  });

  it('prefers the static key and says what to set when nothing is configured', async () => {
    const provider = metricsTokenProvider({
      metricsUrl: 'http://m/read',
      apiKey: 'k',
      clientId: 'c',
      clientSecret: 's',
    });
    expect(await provider.token()).toBe('k');
    expect(() => metricsTokenProvider({ metricsUrl: 'http://m/read' })).toThrow(/METRICS_API_KEY/);
  });
});

describe('sample values', () => {
  it('reads every form Prometheus writes and rejects the rest', () => {
    expect(parseSampleValue('0.25')).toBe(0.25);
    expect(parseSampleValue('-1e-3')).toBe(-0.001);
    expect(parseSampleValue('+Inf')).toBe(Number.POSITIVE_INFINITY);
    expect(parseSampleValue('-Inf')).toBe(Number.NEGATIVE_INFINITY);
    expect(parseSampleValue('NaN')).toBeNaN();
    expect(() => parseSampleValue('abc')).toThrow();
    expect(() => parseSampleValue('')).toThrow();
  });
});
