import { afterEach, describe, expect, it } from 'vitest';
import { startTestSim, type TestSim, tokenFor } from './sim-harness.js';

let t: TestSim;
afterEach(async () => {
  await t?.close();
});

describe('metrics side', () => {
  it('when turned off, says so in the ready info and answers /read with 503 and the reason', async () => {
    t = await startTestSim('B', { metrics: false });
    expect(t.sim.info.metricsAvailable).toBe(false);
    expect(t.sim.info.metricsNote).toMatch(/turned off/);
    const r = await t.http('GET', `${t.sim.info.metricsUrl}/api/v1/query?query=up`, {
      headers: { authorization: `Bearer ${t.sim.info.metricsApiKey}` },
    });
    expect(r.status).toBe(503);
    expect(r.json.message).toMatch(/turned off/);
  });

  it('exports running instances with their GPU load and checks metrics bearers by audience', async () => {
    t = await startTestSim('B', { metrics: true });
    const id = (await t.cloud('POST', '/instances', { body: { name: 'gpu-box', type: 'h100-hgx-80gb.1x' } }))
      .json.id;
    const exporterUrl = t.sim.info.metricsUrl.replace(/\/read$/, '/exporter/metrics');
    expect((await t.http('GET', exporterUrl)).text).not.toContain(id);
    await t.sim.clock.advance(1000);
    await t.control('PUT', `/instances/${id}/load`, { load: 'idle' });
    const exported = await t.http('GET', exporterUrl);
    expect(exported.status).toBe(200);
    expect(exported.text).toContain(`instance_id="${id}"`);

    const query = `${t.sim.info.metricsUrl}/api/v1/query?query=up`;
    const cloudJwt = await tokenFor(t, t.sim.info.cloudAudience);
    const metricsJwt = await tokenFor(t, t.sim.info.metricsAudience);
    expect((await t.http('GET', query, { headers: { authorization: `Bearer ${cloudJwt}` } })).status).toBe(
      401,
    );
    expect(
      (await t.http('GET', query, { headers: { authorization: `Bearer ${t.sim.info.cloudToken}` } })).status,
    ).toBe(401);
    expect(
      (await t.http('GET', query, { headers: { authorization: `Bearer ${metricsJwt}` } })).status,
    ).not.toBe(401);
    expect(
      (await t.http('GET', query, { headers: { authorization: `Bearer ${t.sim.info.metricsApiKey}` } }))
        .status,
    ).not.toBe(401);
  });
});
