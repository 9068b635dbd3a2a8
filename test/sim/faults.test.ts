import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestSim, type TestSim } from './sim-harness.js';

let t: TestSim | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('fault injection', () => {
  it('answers 429 with Retry-After for the named operation only, for `count` requests', async () => {
    t = await startTestSim('B');
    const added = await t.control('POST', '/faults', {
      operation: 'listInstances',
      status: 429,
      retryAfterSeconds: 3,
      count: 2,
    });
    expect(added.status).toBe(201);
    expect(added.json.id).toMatch(/^fault-/);
    const first = await t.cloud('GET', '/instances');
    expect(first.status).toBe(429);
    expect(first.headers['retry-after']).toBe('3');
    expect(first.json.message).toMatch(/Injected fault/);
    expect((await t.cloud('POST', '/projects', { body: { name: 'p' }, project: null })).status).toBe(201);
    expect((await t.cloud('GET', '/instances')).status).toBe(429);
    expect((await t.cloud('GET', '/instances')).status).toBe(200);
    const listed = (await t.control('GET', '/faults')).json;
    expect(listed[0]).toMatchObject({ hits: 2, remaining: 0 });
  });

  it('injects 500s for every operation with "*", and DELETE /_sim/faults clears them', async () => {
    t = await startTestSim('C');
    await t.control('POST', '/faults', { status: 500 });
    expect((await t.cloud('GET', '/capacity')).status).toBe(500);
    const create = await t.cloud('POST', '/instances', { body: { name: 'f', type: 'cpu.16x' } });
    expect(create.status).toBe(500);
    const counts = (await t.control('GET', '/creates')).json;
    expect(counts.createInstance).toBeUndefined();
    expect(counts.attempts.createInstance).toEqual({ f: 1 });
    expect((await t.control('DELETE', '/faults')).status).toBe(200);
    expect((await t.cloud('GET', '/capacity')).status).toBe(200);
    expect((await t.cloud('GET', '/instances')).json).toEqual([]);
  });

  it('holds a slow operation for its latency while other operations are answered', async () => {
    t = await startTestSim('B');
    t.sim.control.addFault({ operation: 'listInstances', latencyMs: 400 });
    const started = Date.now();
    const slow = t.cloud('GET', '/instances').then((r) => ({ r, at: Date.now() - started }));
    // Another operation is not held behind it (how fast it is, is the benchmarks' business).
    expect((await t.cloud('GET', '/kubernetes/clusters')).status).toBe(200);
    const { r, at } = await slow;
    expect(r.status).toBe(200);
    // A lower bound only: the simulator holds the answer at least as long as the fault says.
    expect(at).toBeGreaterThanOrEqual(390);
    expect((await t.control('GET', '/faults')).json[0].hits).toBe(1);
  });

  it('hangs a request until the simulator closes, and close does not wait for it', async () => {
    const sim = await startTestSim('B');
    t = sim;
    sim.sim.control.addFault({ operation: 'getInstance', hang: true });
    const hung = request(`${sim.sim.info.cloudUrl}/instances/00000000-0000-4000-8000-000000000000`, {
      headers: { authorization: `Bearer ${sim.sim.info.cloudToken}`, 'x-project-id': sim.sim.info.projectId },
    }).then(
      (res) => `answered ${res.statusCode}`,
      (err: Error) => `failed: ${err.message}`,
    );
    // Others are served while it hangs.
    await expect.poll(async () => (await sim.control('GET', '/faults')).json[0].hits).toBe(1);
    expect((await sim.cloud('GET', '/instances')).status).toBe(200);
    t = undefined;
    // close() resolves although a request is still held (the test's own timeout is the limit).
    await sim.close();
    expect(await hung).toMatch(/^failed/);
  });

  it('affects about `rate` of the requests, reproducibly for a seed', async () => {
    const run = async () => {
      const sim = await startTestSim('B', { seed: 7 });
      await sim.control('POST', '/faults', { operation: 'listInstances', status: 503, rate: 0.3 });
      const statuses: number[] = [];
      for (let i = 0; i < 200; i++) statuses.push((await sim.cloud('GET', '/instances')).status);
      await sim.close();
      return statuses;
    };
    const a = await run();
    const failed = a.filter((s) => s === 503).length;
    expect(failed).toBeGreaterThan(30);
    expect(failed).toBeLessThan(90);
    expect(await run()).toEqual(a);
  });

  it('rejects a fault that does nothing or names an unknown operation', async () => {
    t = await startTestSim('B');
    const empty = await t.control('POST', '/faults', { operation: 'listInstances' });
    expect(empty.status).toBe(400);
    expect(empty.json.message).toMatch(/at least one of status, latencyMs or hang/);
    const unknown = await t.control('POST', '/faults', { operation: 'launchRocket', status: 500 });
    expect(unknown.status).toBe(400);
    expect(unknown.json.message).toMatch(/^operation:/);
    expect((await t.control('POST', '/faults', { status: 500, rate: 2 })).status).toBe(400);
  });

  it('faults the token server only when named', async () => {
    t = await startTestSim('B');
    await t.control('POST', '/faults', { status: 503 });
    const body = {
      client_id: t.sim.info.clientId,
      client_secret: t.sim.info.clientSecret,
      audience: t.sim.info.cloudAudience,
      grant_type: 'client_credentials',
    };
    const url = `${t.sim.info.authUrl}/oauth/token`;
    expect((await t.http('POST', url, { body })).status).toBe(200);
    await t.control('POST', '/faults', { operation: 'oauthToken', status: 503, count: 1 });
    expect((await t.http('POST', url, { body })).status).toBe(503);
    expect((await t.http('POST', url, { body })).status).toBe(200);
  });
});
