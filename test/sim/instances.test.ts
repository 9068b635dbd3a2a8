import { afterEach, describe, expect, it } from 'vitest';
import { findSimType } from '../../src/sim/catalog.js';
import { startTestSim, type TestSim } from './sim-harness.js';

let t: TestSim;
afterEach(async () => {
  await t?.close();
});

describe('instances on the manual clock', () => {
  it('moves creating → running (with an ip), stopping → stopped, starting → running, deleting → gone', async () => {
    t = await startTestSim('B');
    const created = await t.cloud('POST', '/instances', {
      body: { name: 'train-1', type: 'h100-hgx-80gb.1x', image: 'image://ubuntu22.04', tags: { team: 'ml' } },
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      name: 'train-1',
      type: 'h100-hgx-80gb.1x',
      state: 'creating',
      ip: null,
      image: 'ubuntu22.04',
      preemptible: false,
      ephemeral: false,
      userData: null,
      filesystems: [],
      tags: { team: 'ml' },
    });
    const id = created.json.id as string;

    await t.sim.clock.advance(999);
    expect((await t.cloud('GET', `/instances/${id}`)).json.state).toBe('creating');
    await t.sim.clock.advance(1);
    const running = await t.cloud('GET', `/instances/${id}`);
    expect(running.json.state).toBe('running');
    expect(running.json.ip).toMatch(/^10\.\d+\.\d+\.\d+$/);

    expect((await t.cloud('POST', `/instances/${id}/actions/start`)).status).toBe(409);
    const stop = await t.cloud('POST', `/instances/${id}/actions/stop`);
    expect(stop.status).toBe(202);
    expect((await t.cloud('GET', `/instances/${id}`)).json.state).toBe('stopping');
    const again = await t.cloud('POST', `/instances/${id}/actions/stop`);
    expect(again.status).toBe(409);
    expect(again.json.message).toMatch(/stopping; only a running instance can be stopped/);
    await t.control('POST', '/clock', { advanceMs: 1000 });
    expect((await t.cloud('GET', `/instances/${id}`)).json.state).toBe('stopped');

    expect((await t.cloud('POST', `/instances/${id}/actions/start`)).status).toBe(202);
    expect((await t.cloud('GET', `/instances/${id}`)).json.state).toBe('starting');
    await t.sim.clock.advance(1000);
    expect((await t.cloud('GET', `/instances/${id}`)).json).toMatchObject({
      state: 'running',
      ip: running.json.ip,
    });

    expect((await t.cloud('DELETE', `/instances/${id}`)).status).toBe(204);
    expect((await t.cloud('GET', `/instances/${id}`)).json.state).toBe('deleting');
    expect((await t.cloud('DELETE', `/instances/${id}`)).status).toBe(404);
    await t.sim.clock.advance(1000);
    expect((await t.cloud('GET', `/instances/${id}`)).status).toBe(404);
    expect((await t.cloud('GET', '/instances')).json).toEqual([]);
  });

  it('shape C answers start and stop with 200 and the instance; shape A carries cluster_id and no filesystems', async () => {
    t = await startTestSim('C');
    const id = (await t.cloud('POST', '/instances', { body: { name: 'c1', type: 'cpu.16x' } })).json.id;
    await t.sim.clock.advance(1000);
    const stop = await t.cloud('POST', `/instances/${id}/actions/stop`);
    expect(stop.status).toBe(200);
    expect(stop.json).toMatchObject({ id, state: 'stopping' });
    await t.close();

    t = await startTestSim('A');
    const a = await t.cloud('POST', '/instances', { body: { name: 'a1', type: 'cpu.16x' } });
    expect(a.status).toBe(201);
    expect(a.json).toHaveProperty('cluster_id', null);
    expect(a.json).not.toHaveProperty('filesystems');
  });

  it('moves instances in real time when the clock is real', async () => {
    t = await startTestSim('B', { clock: 'real', transitionMs: 50 });
    const id = (await t.cloud('POST', '/instances', { body: { name: 'r', type: 'cpu.16x' } })).json.id;
    let state = 'creating';
    for (let i = 0; i < 100 && state !== 'running'; i++) {
      await new Promise((r) => setTimeout(r, 20));
      state = (await t.cloud('GET', `/instances/${id}`)).json.state;
    }
    expect(state).toBe('running');
  });
});

describe('capacity', () => {
  it('shrinks on create, refuses an exhausted type clearly without creating, and returns on delete', async () => {
    t = await startTestSim('C');
    const type = 'h100-hgx-80gb.8x';
    const start = findSimType(type)!.capacity;
    const cap = async () =>
      ((await t.cloud('GET', '/capacity')).json as Array<{ name: string; capacity: number }>).find(
        (c) => c.name === type,
      )?.capacity;
    expect(await cap()).toBe(start);
    const ids: string[] = [];
    for (let i = 0; i < start; i++) {
      const r = await t.cloud('POST', '/instances', { body: { name: `big-${i}`, type } });
      expect(r.status).toBe(201);
      ids.push(r.json.id);
    }
    expect(await cap()).toBe(0);
    const refused = await t.cloud('POST', '/instances', { body: { name: 'one-too-many', type } });
    expect(refused.status).toBe(400);
    expect(refused.json.message).toMatch(/h100-hgx-80gb\.8x is out of capacity/);
    expect((await t.cloud('GET', '/instances')).json).toHaveLength(start);

    await t.cloud('DELETE', `/instances/${ids[0]}`);
    expect(await cap()).toBe(0);
    await t.sim.clock.advance(1000);
    expect(await cap()).toBe(1);

    await t.control('POST', '/capacity', { type, capacity: 0 });
    expect(await cap()).toBe(0);
    expect((await t.control('POST', '/capacity', { type: 'nope', capacity: 1 })).status).toBe(400);
  });
});

describe('validation', () => {
  it('answers 400 naming the field and the rule', async () => {
    t = await startTestSim('B');
    const bad = async (body: unknown, field: RegExp) => {
      const r = await t.cloud('POST', '/instances', { body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.message).toMatch(field);
    };
    await bad({ type: 'cpu.16x' }, /^name: is required/);
    await bad({ name: 'x' }, /^type: is required/);
    await bad({ name: 'x', type: 'gpu-9000' }, /^type: "gpu-9000" is not an instance type/);
    await bad({ name: 'x', type: 'cpu.16x', image: 'ubuntu' }, /^image: .*image:\/\/ubuntu22\.04/);
    await bad({ name: 'x', type: 'cpu.16x', userData: 'not base64!' }, /^userData: .*base64/);
    await bad({ name: 'x', type: 'cpu.16x', tags: { '-bad': 'v' } }, /^tags: key "-bad".*1 to 63 characters/);
    await bad({ name: 'x', type: 'cpu.16x', tags: { ok: 1 } }, /^tags: the value of "ok" must be a string/);
    await bad({ name: 'x', type: 'cpu.16x', preemptible: 'yes' }, /^preemptible: must be true or false/);
    await bad(
      { name: 'x', type: 'cpu.16x', filesystems: ['nope'] },
      /^filesystems\[0\]: must be a filesystem UUID/,
    );
    await bad(
      { name: 'x', type: 'cpu.16x', filesystems: ['123e4567-e89b-42d3-a456-426614174000'] },
      /^filesystems\[0\]: no filesystem/,
    );
    await bad([1], /^body: the request body must be a JSON object/);
    const notJson = await t.cloud('POST', '/instances', { raw: '{"name":' });
    expect(notJson.status).toBe(400);
    expect(notJson.json.message).toBe('body: is not valid JSON');

    const fs = await t.cloud('POST', '/filesystems', { body: { name: 'data', size: '512' } });
    expect(fs.status).toBe(400);
    expect(fs.json.message).toMatch(/^size: .*unit/);
    const ok = await t.cloud('POST', '/filesystems', { body: { name: 'data', size: '512Gi' } });
    expect(ok.status).toBe(201);
    const withFs = await t.cloud('POST', '/instances', {
      body: { name: 'x', type: 'cpu.16x', filesystems: [ok.json.id] },
    });
    expect(withFs.status).toBe(201);
    expect(withFs.json.filesystems).toEqual([ok.json.id]);
    expect((await t.cloud('GET', `/filesystems/${ok.json.id}`)).json).toEqual({
      id: ok.json.id,
      name: 'data',
      size: '512Gi',
    });
  });

  it('creates projects with checked tags (no project header needed)', async () => {
    t = await startTestSim('B');
    const p = await t.cloud('POST', '/projects', {
      body: { name: 'research', tags: { team: 'ml' } },
      project: null,
    });
    expect(p.status).toBe(201);
    expect(p.json).toMatchObject({ name: 'research', state: 'active', tags: { team: 'ml' } });
    const inNew = await t.cloud('POST', '/instances', {
      body: { name: 'n', type: 'cpu.16x' },
      project: p.json.id,
    });
    expect(inNew.status).toBe(201);
    expect((await t.cloud('GET', '/instances', { project: p.json.id })).json).toHaveLength(1);
    expect((await t.cloud('GET', '/instances')).json).toHaveLength(0);
    const bad = await t.cloud('POST', '/projects', { body: { tags: {} }, project: null });
    expect(bad.json.message).toMatch(/^name: is required/);
  });
});

describe('create counts and reset', () => {
  it('counts every create by name, including failed ones and duplicates, and reset clears it', async () => {
    t = await startTestSim('B');
    await t.cloud('POST', '/instances', { body: { name: 'dup', type: 'cpu.16x' } });
    await t.cloud('POST', '/instances', { body: { name: 'dup', type: 'cpu.16x' } });
    await t.cloud('POST', '/instances', { body: { name: 'broken', type: 'nope' } });
    await t.cloud('POST', '/instances', { body: { name: 'unauth', type: 'cpu.16x' }, token: 'wrong' });
    const counts = (await t.control('GET', '/creates')).json;
    expect(counts.createInstance).toEqual({ dup: 2, broken: 1 });
    expect(counts.attempts.createInstance).toEqual({ dup: 2, broken: 1, unauth: 1 });
    expect(t.sim.control.createCount('createInstance', 'dup')).toBe(2);
    const list = (await t.cloud('GET', '/instances')).json as Array<{ name: string }>;
    expect(list.filter((i) => i.name === 'dup')).toHaveLength(2);

    const before = (await t.control('GET', '/state')).json;
    expect(before.projects[0].instances).toHaveLength(2);
    const reset = await t.control('POST', '/reset');
    expect(reset.json.projectId).toBe(t.sim.info.projectId);
    expect((await t.cloud('GET', '/instances')).json).toEqual([]);
    expect((await t.control('GET', '/creates')).json).toEqual({ attempts: {} });
    const after = (await t.control('GET', '/state')).json;
    expect(after.projects.map((p: { id: string }) => p.id)).toEqual(
      before.projects.map((p: { id: string }) => p.id),
    );
    // Credentials survive a reset.
    expect((await t.cloud('GET', '/instances')).status).toBe(200);
  });

  it('keeps thousands of instances and lists them quickly', async () => {
    t = await startTestSim('B');
    t.sim.control.setCapacity('cpu.16x', 5000);
    const started = performance.now();
    for (let i = 0; i < 2000; i += 100) {
      await Promise.all(
        Array.from({ length: 100 }, (_, j) =>
          t.cloud('POST', '/instances', { body: { name: `n-${i + j}`, type: 'cpu.16x' } }),
        ),
      );
    }
    await t.sim.clock.advance(1000);
    const list = await t.cloud('GET', '/instances');
    expect(list.json).toHaveLength(2000);
    expect(list.json.every((i: { state: string }) => i.state === 'running')).toBe(true);
    expect(performance.now() - started).toBeLessThan(20_000);
  });
});

describe('GPU load', () => {
  it('stores a forced load on the instance for the metrics side', async () => {
    t = await startTestSim('B');
    const id = (await t.cloud('POST', '/instances', { body: { name: 'g', type: 'h100-hgx-80gb.1x' } })).json
      .id;
    expect((await t.control('PUT', `/instances/${id}/load`, { load: 'idle' })).status).toBe(200);
    expect((await t.control('PUT', `/instances/${id}/load`, { load: 'sleepy' })).status).toBe(400);
    expect(
      (await t.control('PUT', '/instances/00000000-0000-4000-8000-000000000000/load', { load: 'busy' }))
        .status,
    ).toBe(404);
    const state = (await t.control('GET', '/state')).json;
    expect(state.projects[0].instances[0].load).toBe('idle');
  });
});
