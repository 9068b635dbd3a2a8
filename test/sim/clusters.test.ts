import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { fakeSshKey, startTestSim, type TestSim } from './sim-harness.js';

let t: TestSim;
afterEach(async () => {
  await t?.close();
});

describe('Kubernetes in shape A', () => {
  it('creates a cluster PROVISIONING → READY with a default node pool whose nodes carry A’s fields', async () => {
    t = await startTestSim('A');
    const created = await t.cloud('POST', '/kubernetes/clusters', {
      body: {
        name: 'train',
        version: 'v1.31.2',
        defaultNodePool: { create: true, name: 'gpu', type: 'h100-hgx-80gb.8x', count: 2 },
      },
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      name: 'train',
      version: 'v1.31.2',
      status: { type: 'PROVISIONING', details: {} },
    });
    expect(typeof created.json.certificateAuthorityData).toBe('string');
    const id = created.json.id;
    await t.sim.clock.advance(1000);
    expect((await t.cloud('GET', `/kubernetes/clusters/${id}`)).json.status.type).toBe('READY');

    const pools = (await t.cloud('GET', `/kubernetes/clusters/${id}/node-pools`)).json;
    expect(pools).toHaveLength(1);
    expect(pools[0]).toMatchObject({
      name: 'gpu',
      cluster: 'train',
      type: 'h100-hgx-80gb.8x',
      count: 2,
      version: 'v1.31.2',
    });
    expect(pools[0].nodes).toHaveLength(2);
    const node = pools[0].nodes[0];
    expect(node).toMatchObject({
      state: 'ready',
      kubeletVersion: 'v1.31.2',
      conditions: [{ type: 'Ready', status: 'True' }],
      accelerator: {
        type: 'nvidia/gpu',
        product: 'NVIDIA-H100-80GB-HBM3',
        cudaVersion: expect.any(String),
        count: 8,
      },
      taints: [{ key: 'nvidia.com/gpu', effect: 'NoSchedule' }],
    });
    expect(node.publicIP).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(node.privateIP).toMatch(/^10\./);
    expect(new Date(node.createdAt).toISOString()).toBe(node.createdAt);
    // The pool's machines came out of capacity: 4 at start, 2 taken.
    const state = (await t.control('GET', '/state')).json;
    expect(state.capacity.find((c: { name: string }) => c.name === 'h100-hgx-80gb.8x').capacity).toBe(2);
  });

  it('validates create, registers with labels, updates version by pattern and merges labels', async () => {
    t = await startTestSim('A');
    const noVersion = await t.cloud('POST', '/kubernetes/clusters', { body: { name: 'x' } });
    expect(noVersion.status).toBe(400);
    expect(noVersion.json.message).toMatch(/^version: is required/);
    const badCidr = await t.cloud('POST', '/kubernetes/clusters', {
      body: { name: 'x', version: 'v1.30', podCIDRBlock: '10.0.0.0/40' },
    });
    expect(badCidr.json.message).toMatch(/^podCIDRBlock: /);
    const badPool = await t.cloud('POST', '/kubernetes/clusters', {
      body: { name: 'x', version: 'v1.30', defaultNodePool: { create: true, type: 'cpu.16x', count: 0 } },
    });
    expect(badPool.status).toBe(400);
    expect(badPool.json.message).toMatch(/^defaultNodePool\.count: /);

    const noKubeconfig = await t.cloud('POST', '/kubernetes/clusters/register', { body: { name: 'edge' } });
    expect(noKubeconfig.json.message).toMatch(/^kubeconfig: is required/);
    const reg = await t.cloud('POST', '/kubernetes/clusters/register', {
      body: { name: 'edge', kubeconfig: 'apiVersion: v1\n', labels: { region: 'eu' } },
    });
    expect(reg.status).toBe(201);
    expect(reg.json).toMatchObject({ name: 'edge', status: { type: 'READY' }, labels: { region: 'eu' } });

    const badVersion = await t.cloud('PATCH', `/kubernetes/clusters/${reg.json.id}`, {
      body: { version: '1.32' },
    });
    expect(badVersion.status).toBe(400);
    expect(badVersion.json.message).toMatch(/^version: "1.32" is not valid: a version looks like v1.31/);
    const updated = await t.cloud('PATCH', `/kubernetes/clusters/${reg.json.id}`, {
      body: { version: 'v1.32.1', labels: { 'service.io/metrics-enabled': 'true' } },
    });
    expect(updated.status).toBe(200);
    expect(updated.json).toMatchObject({
      version: 'v1.32.1',
      labels: { region: 'eu', 'service.io/metrics-enabled': 'true' },
    });
    // A lists no 409 on create: a taken name is a 400.
    const dup = await t.cloud('POST', '/kubernetes/clusters/register', {
      body: { name: 'edge', kubeconfig: 'x' },
    });
    expect(dup.status).toBe(400);
    expect(dup.json.message).toMatch(/already exists/);
  });
});

describe('Kubernetes in shape B', () => {
  it('creates clusters (409 on a taken name) and pools whose nodes lack A-only fields; kubeconfig is base64 YAML', async () => {
    t = await startTestSim('B');
    const c = await t.cloud('POST', '/kubernetes/clusters', { body: { name: 'k' } });
    expect(c.status).toBe(201);
    expect(c.json).not.toHaveProperty('status');
    expect(Object.keys(c.json).sort()).toEqual(['certificateAuthorityData', 'id', 'name', 'version']);
    expect((await t.cloud('POST', '/kubernetes/clusters', { body: { name: 'k' } })).status).toBe(409);

    const pool = await t.cloud('POST', `/kubernetes/clusters/${c.json.id}/node-pools`, {
      body: { name: 'p', type: 'a100-sxm4-80gb.4x', count: 1 },
    });
    expect(pool.status).toBe(201);
    const node = pool.json.nodes[0];
    expect(node.accelerator).toEqual({
      type: 'nvidia/gpu',
      product: 'NVIDIA-A100-SXM4-80GB',
      driverVersion: expect.any(String),
    });
    expect(node).not.toHaveProperty('publicIP');
    expect(node).not.toHaveProperty('privateIP');
    const dupPool = await t.cloud('POST', `/kubernetes/clusters/${c.json.id}/node-pools`, {
      body: { name: 'p', type: 'cpu.16x', count: 1 },
    });
    expect(dupPool.status).toBe(409);
    const tooMany = await t.cloud('POST', `/kubernetes/clusters/${c.json.id}/node-pools`, {
      body: { name: 'q', type: 'a100-sxm4-80gb.4x', count: 100 },
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.json.message).toMatch(/out of capacity/);
    const noCluster = await t.cloud(
      'POST',
      '/kubernetes/clusters/00000000-0000-4000-8000-000000000000/node-pools',
      {
        body: { name: 'q', type: 'cpu.16x', count: 1 },
      },
    );
    expect(noCluster.status).toBe(400);

    const kc = await t.cloud('GET', `/kubernetes/clusters/${c.json.id}/credentials`);
    expect(kc.status).toBe(200);
    expect(kc.headers['content-type']).toBe('application/yaml');
    expect(kc.headers['cache-control']).toMatch(/no-store/);
    const yaml = Buffer.from(kc.text, 'base64').toString('utf8');
    expect(yaml).toMatch(/^apiVersion: v1\nkind: Config\n/);
    expect(yaml).toContain(`certificate-authority-data: ${c.json.certificateAuthorityData}`);
    expect(yaml).toContain('current-context: k');

    const odd = await t.cloud('POST', '/kubernetes/clusters', { body: { name: 'team: a #1' } });
    const oddYaml = Buffer.from(
      (await t.cloud('GET', `/kubernetes/clusters/${odd.json.id}/credentials`)).text,
      'base64',
    );
    const parsed = parse(oddYaml.toString('utf8'));
    expect(parsed['current-context']).toBe('team: a #1');
    expect(parsed.clusters[0].cluster.server).toBe('https://team-a-1.k8s.sim.invalid:6443');
  });
});

describe('Kubernetes in shape C', () => {
  it('uses flat routes: pools name their cluster, have no nodes, and filter by cluster', async () => {
    t = await startTestSim('C');
    const a = (await t.cloud('POST', '/clusters', { body: { name: 'a', version: 'v1.31.2' } })).json;
    const b = (await t.cloud('POST', '/clusters', { body: { name: 'b' } })).json;
    expect(Object.keys(a).sort()).toEqual(['id', 'name', 'version']);
    const pa = await t.cloud('POST', '/node-pools', {
      body: { name: 'p', cluster: 'a', type: 'cpu.16x', count: 2 },
    });
    expect(pa.status).toBe(201);
    expect(pa.json).toEqual({
      id: pa.json.id,
      name: 'p',
      cluster: 'a',
      type: 'cpu.16x',
      count: 2,
      version: 'v1.31.2',
    });
    await t.cloud('POST', '/node-pools', { body: { name: 'p', cluster: 'b', type: 'cpu.16x', count: 1 } });
    expect((await t.cloud('GET', '/node-pools')).json).toHaveLength(2);
    expect(
      (await t.cloud('GET', `/node-pools?cluster=${b.id}`)).json.map((p: { cluster: string }) => p.cluster),
    ).toEqual(['b']);
    const unknownCluster = await t.cloud('POST', '/node-pools', {
      body: { name: 'p', cluster: 'zzz', type: 'cpu.16x', count: 1 },
    });
    expect(unknownCluster.status).toBe(400);
    expect(unknownCluster.json.message).toMatch(/^cluster: no Kubernetes cluster named "zzz"/);
    expect((await t.cloud('GET', `/node-pools/${pa.json.id}`)).json.name).toBe('p');
    expect((await t.cloud('DELETE', `/node-pools/${pa.json.id}`)).status).toBe(204);
    expect((await t.cloud('GET', `/node-pools/${pa.json.id}`)).status).toBe(404);
  });

  it('lists the Slurm cluster and pools with only id, name (and type)', async () => {
    t = await startTestSim('C');
    const clusters = (await t.cloud('GET', '/slurm/clusters')).json;
    expect(clusters).toEqual([{ id: expect.any(String), name: 'slurm-1' }]);
    const pools = (await t.cloud('GET', '/slurm/node-pools')).json;
    expect(pools).toEqual([{ id: expect.any(String), name: 'gpu', type: 'h100-hgx-80gb.8x' }]);
  });
});

describe('Slurm', () => {
  it('in shape A: a cluster with login nodes and pools with A’s node fields; users added, read, updated, removed', async () => {
    t = await startTestSim('A');
    const [cluster] = (await t.cloud('GET', '/slurm/clusters')).json;
    expect(cluster).toMatchObject({
      name: 'slurm-1',
      version: expect.any(String),
      loginNodes: [{ name: expect.any(String) }],
    });
    const [pool] = (await t.cloud('GET', `/slurm/clusters/${cluster.id}/node-pools`)).json;
    expect(pool.nodes[0]).toMatchObject({
      states: ['idle'],
      slurmdVersion: expect.any(String),
      partitions: ['gpu'],
      reservation: '',
      reason: '',
      publicIP: expect.any(String),
      privateIP: expect.any(String),
      accelerator: { type: 'nvidia/gpu', count: 8 },
    });

    const users = `/slurm/clusters/${cluster.id}/users`;
    const key = fakeSshKey();
    const added = await t.cloud('POST', users, { body: { username: 'alice', sshKeys: [key] } });
    expect(added.status).toBe(201);
    expect(added.json).toEqual({ username: 'alice', sshKeys: [key], sudo: false });
    expect((await t.cloud('POST', users, { body: { username: 'alice', sshKeys: [key] } })).status).toBe(409);
    const badName = await t.cloud('POST', users, { body: { username: 'Alice!', sshKeys: [key] } });
    expect(badName.status).toBe(400);
    expect(badName.json.message).toMatch(/^username: /);
    const badKey = await t.cloud('POST', users, { body: { username: 'bob', sshKeys: ['ssh-ed25519 AAAA'] } });
    expect(badKey.json.message).toMatch(/^sshKeys\[0\]: /);
    expect(
      (await t.cloud('POST', users, { body: { username: 'carol', sshKeys: [key], sudo: true } })).status,
    ).toBe(201);

    const noKeys = await t.cloud('PUT', `${users}/carol`, { body: { sudo: false } });
    expect(noKeys.status).toBe(400);
    expect(noKeys.json.message).toMatch(/^sshKeys: is required/);
    const key2 = fakeSshKey('ssh-rsa');
    const kept = await t.cloud('PUT', `${users}/carol`, { body: { sshKeys: [key2] } });
    expect(kept.json).toEqual({ username: 'carol', sshKeys: [key2], sudo: true });
    expect((await t.cloud('GET', users)).json.map((u: { username: string }) => u.username)).toEqual([
      'alice',
      'carol',
    ]);
    expect((await t.cloud('DELETE', `${users}/alice`)).status).toBe(204);
    expect((await t.cloud('GET', `${users}/alice`)).status).toBe(404);
    expect((await t.cloud('PUT', `${users}/alice`, { body: { sshKeys: [key] } })).status).toBe(404);
  });

  it('in shape B: clusters and pools are created (pool names unique, nodes without A fields)', async () => {
    t = await startTestSim('B');
    const c = await t.cloud('POST', '/slurm/clusters', { body: { name: 'hpc', version: '24.05.6' } });
    expect(c.status).toBe(201);
    expect(c.json).toMatchObject({ name: 'hpc', version: '24.05.6', loginNodes: [{ name: 'hpc-login-01' }] });
    expect((await t.cloud('POST', '/slurm/clusters', { body: { name: 'hpc' } })).status).toBe(400);
    const p = await t.cloud('POST', `/slurm/clusters/${c.json.id}/node-pools`, {
      body: { name: 'cpu', type: 'cpu.16x', count: 3 },
    });
    expect(p.status).toBe(201);
    expect(p.json.nodes).toHaveLength(3);
    expect(p.json.nodes[0]).not.toHaveProperty('accelerator');
    expect(p.json.nodes[0]).not.toHaveProperty('publicIP');
    expect(
      (
        await t.cloud('POST', `/slurm/clusters/${c.json.id}/node-pools`, {
          body: { name: 'cpu', type: 'cpu.16x', count: 1 },
        })
      ).status,
    ).toBe(409);
    expect((await t.cloud('DELETE', `/slurm/clusters/${c.json.id}`)).status).toBe(204);
    expect((await t.cloud('GET', '/slurm/clusters')).json).toEqual([]);
  });
});
