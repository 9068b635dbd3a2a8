import { once } from 'node:events';
import { createServer } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CloudNetworkError,
  CloudNotAvailableError,
  CloudRateLimitError,
  CloudServerError,
  CloudTimeoutError,
  createInfraClient,
  DEFAULT_RETRY_POLICY,
  type InfraClient,
  type InfraClientOptions,
  isRetrySafe,
  isTransient,
  parseRetryAfter,
  retryDelay,
  staticToken,
} from '../../src/cloud/index.js';
import { ErrorCode } from '../../src/errors.js';
import { type ScriptedServer, startScriptedServer } from '../fakes/scripted-http-server.js';
import { INSTANCE_ID as ID, instanceBody, PROJECT } from './instance-fixtures.js';

const INSTANCE = instanceBody({ ip: null, state: 'creating' });

describe('retry policy (pure)', () => {
  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('7', now)).toBe(7000);
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:12 GMT', now)).toBe(12_000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('backs off with capped full jitter and caps what Retry-After may ask', () => {
    const p = DEFAULT_RETRY_POLICY;
    expect(retryDelay(1, p, undefined, () => 0.999)).toBeLessThan(p.baseDelayMs);
    expect(retryDelay(3, p, undefined, () => 0.999)).toBe(Math.floor(0.999 * p.baseDelayMs * 4));
    expect(retryDelay(30, p, undefined, () => 0.999)).toBeLessThanOrEqual(p.maxDelayMs);
    expect(retryDelay(2, p, undefined, () => 0)).toBe(0);
    expect(retryDelay(1, p, 5_000)).toBe(5_000);
    expect(retryDelay(1, p, 3_600_000)).toBe(p.maxRetryAfterMs);
  });

  it('retries only safe requests: GET/PUT/DELETE and start/stop, never a create', () => {
    expect(isRetrySafe('GET')).toBe(true);
    expect(isRetrySafe('PUT', 'updateSlurmUser')).toBe(true);
    expect(isRetrySafe('DELETE', 'deleteInstance')).toBe(true);
    expect(isRetrySafe('POST', 'startInstance')).toBe(true);
    expect(isRetrySafe('POST', 'stopInstance')).toBe(true);
    expect(isRetrySafe('POST', 'createInstance')).toBe(false);
    expect(isRetrySafe('POST', 'addSlurmUser')).toBe(false);
    expect(isRetrySafe('PATCH', 'updateK8sCluster')).toBe(false);
  });

  it('treats 408, 429 and 5xx but 501 as transient', () => {
    const err = (status: number) => new CloudServerError({ status, operation: 'x' });
    for (const s of [408, 429, 500, 502, 503, 504]) expect(isTransient(err(s))).toBe(true);
    for (const s of [400, 401, 403, 404, 409, 501]) expect(isTransient(err(s))).toBe(false);
    expect(isTransient(new CloudTimeoutError('x', 1))).toBe(true);
  });
});

describe('retries over HTTP', () => {
  let api: ScriptedServer;
  let client: InfraClient | undefined;
  let waits: number[];

  beforeEach(async () => {
    api = await startScriptedServer();
    waits = [];
  });
  afterEach(async () => {
    await client?.close();
    client = undefined;
    api.assertNoUnexpected();
    await api.close();
  });

  /** A client whose waits are recorded instead of slept, so tests stay fast and exact. */
  function make(extra: Partial<InfraClientOptions> = {}): InfraClient {
    client = createInfraClient({
      baseUrl: api.url,
      shape: 'B',
      projectId: PROJECT,
      tokens: staticToken('t'),
      retry: {
        sleep: async (ms) => {
          waits.push(ms);
        },
      },
      ...extra,
    });
    return client;
  }

  it('a 429 with Retry-After waits what the server asked, then succeeds', async () => {
    api.on('GET', '/instances', (_req, n) =>
      n === 1
        ? { status: 429, headers: { 'retry-after': '7' }, json: { message: 'slow down' } }
        : { json: [INSTANCE] },
    );
    const list = await make().listInstances();
    expect(list[0]!.id).toBe(ID);
    expect(waits).toEqual([7000]);
    expect(api.requests).toHaveLength(2);
  });

  it('a 503 on a GET is retried and the second answer is used', async () => {
    api.on('GET', `/instances/${ID}`, (_req, n) =>
      n === 1 ? { status: 503, json: { message: 'upstream down' } } : { json: INSTANCE },
    );
    const got = await make().getInstance({ id: ID });
    expect(got.name).toBe('train-1');
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeLessThan(DEFAULT_RETRY_POLICY.baseDelayMs);
  });

  it('gives up after the policy attempts and reports the last failure', async () => {
    api.on('GET', '/instances', {
      status: 503,
      json: { message: 'maintenance' },
      headers: { 'x-request-id': 'req-9' },
    });
    const err = await make({ retry: { maxAttempts: 3, sleep: async () => {} } })
      .listInstances()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudServerError);
    expect(err).toMatchObject({ status: 503, serverMessage: 'maintenance', requestId: 'req-9' });
    expect(api.requests).toHaveLength(3);
  });

  it('a create that gets a 503 is not retried: the server saw exactly one request', async () => {
    api.on('POST', '/instances', { status: 503, json: { message: 'try later' } });
    const err = await make()
      .createInstance({ name: 'train-1', type: 'h100-hgx-80gb.8x' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudServerError);
    expect(api.count('POST', '/instances')).toBe(1);
    expect(waits).toEqual([]);
  });

  it('a create that is rate limited is not retried either', async () => {
    api.on('POST', '/instances', { status: 429, headers: { 'retry-after': '1' }, json: { message: 'busy' } });
    const err = await make()
      .createInstance({ name: 'train-1', type: 'h100-hgx-80gb.8x' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudRateLimitError);
    expect((err as CloudRateLimitError).retryAfterMs).toBe(1000);
    expect(api.requests).toHaveLength(1);
  });

  it('start (an idempotent action) is retried after a 503', async () => {
    api.on('POST', `/instances/${ID}/actions/start`, (_req, n) =>
      n === 1 ? { status: 503, json: { message: 'x' } } : { status: 202 },
    );
    await expect(make().startInstance({ id: ID })).resolves.toBeUndefined();
    expect(api.requests).toHaveLength(2);
  });

  it('a 501 is not retried and reads as not available on this cloud', async () => {
    api.on('GET', '/filesystems/abc', { status: 501, json: { message: 'not implemented' } });
    const err = await make()
      .getFilesystem({ id: 'abc' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudNotAvailableError);
    expect((err as Error).message).toBe('getFilesystem is not available on this cloud (not implemented).');
    expect((err as CloudNotAvailableError).code).toBe(ErrorCode.CloudUnavailable);
    expect(api.requests).toHaveLength(1);
  });

  it('a request with no answer in time is a CloudTimeoutError', async () => {
    api.on('GET', '/instances', { hang: true });
    const err = await make({ timeoutMs: 150, retry: { maxAttempts: 1 } })
      .listInstances()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudTimeoutError);
    expect(err).toMatchObject({ code: ErrorCode.CloudTimeout, operation: 'listInstances', timeoutMs: 150 });
    expect((err as Error).message).toMatch(/listInstances got no answer from the cloud within 150 ms/);
  });

  it('a timed-out GET is retried, a timed-out create is not', async () => {
    api.on('GET', '/instances', (_req, n) => (n === 1 ? { hang: true } : { json: [] }));
    await expect(make({ timeoutMs: 150 }).listInstances()).resolves.toEqual([]);
    expect(api.count('GET', '/instances')).toBe(2);

    api.on('POST', '/instances', { hang: true });
    await expect(client!.createInstance({ name: 'a', type: 'cpu.16x' })).rejects.toBeInstanceOf(
      CloudTimeoutError,
    );
    expect(api.count('POST', '/instances')).toBe(1);
  });

  it("the caller's AbortSignal stops a call at once with the caller's reason", async () => {
    api.on('GET', '/instances', { hang: true });
    const controller = new AbortController();
    const call = make({ timeoutMs: 10_000 }).listInstances({ signal: controller.signal });
    await api.nextRequest();
    controller.abort(new Error('user pressed cancel'));
    await expect(call).rejects.toThrow('user pressed cancel');
  });

  it('a refused connection is a CloudNetworkError with the code kept', async () => {
    // A port that was free a moment ago: nothing listens there.
    const probe = createServer().listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const port = (probe.address() as { port: number }).port;
    await new Promise((r) => probe.close(r));
    const err = await make({
      baseUrl: `http://127.0.0.1:${port}`,
      retry: { maxAttempts: 2, sleep: async () => {} },
    })
      .createInstance({ name: 'a', type: 'cpu.16x' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudNetworkError);
    expect(err).toMatchObject({
      code: ErrorCode.CloudNetwork,
      errCode: 'ECONNREFUSED',
      operation: 'createInstance',
    });
    expect((err as Error).cause).toBeDefined();
    expect((err as Error).message).toMatch(
      /createInstance could not reach the cloud at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/,
    );
  });
});
