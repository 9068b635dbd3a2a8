import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { type Operation, operationsOf, ROUTES } from '../../src/cloud/routes.js';
import { SHAPES, type Shape } from '../../src/cloud/shape.js';
import { fakeSshKey, type Reply, startTestSim, type TestSim } from './sim-harness.js';

// Each shape answers exactly its route table: every operation succeeds with its success status on a
// walk through the resources, unknown resources get a listed error, and other shapes' routes get 404.

let t: TestSim;
afterEach(async () => {
  await t?.close();
});

function pathOf(shape: Shape, op: Operation, params: Record<string, string>): string {
  const route = ROUTES[shape][op]!;
  return route.path.replace(/\{(\w+)\}/g, (_, name: string) =>
    encodeURIComponent(params[name] ?? randomUUID()),
  );
}

function caller(shape: Shape) {
  const seen = new Map<Operation, number>();
  const call = async (
    op: Operation,
    params: Record<string, string> = {},
    body?: unknown,
    query = '',
  ): Promise<Reply> => {
    const route = ROUTES[shape][op]!;
    const r = await t.cloud(route.method, `${pathOf(shape, op, params)}${query}`, {
      ...(body !== undefined ? { body } : {}),
      ...(route.projectHeader ? {} : { project: null }),
    });
    seen.set(op, r.status);
    expect(r.status, `${op} ${route.method} ${route.path}: ${r.text}`).toBe(route.success);
    return r;
  };
  return { call, seen };
}

async function walk(shape: Shape, call: ReturnType<typeof caller>['call']): Promise<void> {
  const ops = new Set(operationsOf(shape));
  const has = (op: Operation) => ops.has(op);

  const project = await call('createProject', {}, { name: 'walk', tags: { purpose: 'test' } });
  if (has('listProjects')) {
    const all = (await call('listProjects')).json as Array<{ id: string }>;
    expect(all.map((p) => p.id)).toContain(project.json.id);
    await call('getProject', { id: project.json.id });
    await call('deleteProject', { id: project.json.id });
  }

  let fsId: string | undefined;
  if (has('createFilesystem')) {
    fsId = (await call('createFilesystem', {}, { name: 'data', size: '1Ti' })).json.id;
    await call('getFilesystem', { id: fsId! });
    if (has('listFilesystems')) expect((await call('listFilesystems')).json).toHaveLength(1);
  }
  const inst = await call(
    'createInstance',
    {},
    { name: 'w1', type: 'l40s-48gb.2x', ...(fsId && shape !== 'A' ? { filesystems: [fsId] } : {}) },
  );
  const id = inst.json.id as string;
  expect((await call('listInstances')).json).toHaveLength(1);
  await call('getInstance', { id });
  await t.sim.clock.advance(1000);
  await call('stopInstance', { id });
  await t.sim.clock.advance(1000);
  await call('startInstance', { id });
  await call('deleteInstance', { id });
  if (has('deleteFilesystem')) await call('deleteFilesystem', { id: fsId! });

  // Kubernetes
  await call('listK8sClusters');
  const cluster = await call(
    'createK8sCluster',
    {},
    shape === 'A'
      ? {
          name: 'k1',
          version: 'v1.31.2',
          defaultNodePool: { create: true, name: 'gpu', type: 'l40s-48gb.2x', count: 2 },
        }
      : { name: 'k1', version: 'v1.31.2' },
  );
  const clusterId = cluster.json.id as string;
  await call('getK8sCluster', { id: clusterId });
  if (has('registerK8sCluster')) {
    await call(
      'registerK8sCluster',
      {},
      { name: 'edge', kubeconfig: 'apiVersion: v1\nkind: Config\n', labels: { a: 'b' } },
    );
    await call(
      'updateK8sCluster',
      { id: clusterId },
      { version: 'v1.32.0', labels: { 'service.io/metrics-enabled': 'true' } },
    );
  }
  let poolId: string;
  if (has('createK8sNodePool')) {
    const body = { name: 'gpu', type: 'l40s-48gb.2x', count: 2, ...(shape === 'C' ? { cluster: 'k1' } : {}) };
    poolId = (await call('createK8sNodePool', { clusterId }, body)).json.id;
  } else {
    poolId = ((await call('listK8sNodePools', { clusterId })).json as Array<{ id: string }>)[0]!.id;
  }
  expect((await call('listK8sNodePools', { clusterId })).json).toHaveLength(1);
  await call('getK8sNodePool', { clusterId, poolId });
  if (has('getKubeconfig')) await call('getKubeconfig', { clusterId });
  if (has('deleteK8sNodePool')) await call('deleteK8sNodePool', { clusterId, poolId });
  if (has('deleteK8sCluster')) await call('deleteK8sCluster', { id: clusterId });

  // Slurm
  let slurmId: string;
  if (has('createSlurmCluster')) {
    slurmId = (await call('createSlurmCluster', {}, { name: 's1' })).json.id;
  } else {
    slurmId = ((await call('listSlurmClusters')).json as Array<{ id: string }>)[0]!.id;
  }
  expect((await call('listSlurmClusters')).json.length).toBeGreaterThan(0);
  if (has('getSlurmCluster')) await call('getSlurmCluster', { id: slurmId });
  let slurmPoolId: string;
  if (has('createSlurmNodePool')) {
    slurmPoolId = (
      await call('createSlurmNodePool', { clusterId: slurmId }, { name: 'p', type: 'cpu.16x', count: 1 })
    ).json.id;
  } else {
    slurmPoolId = (
      (await call('listSlurmNodePools', { clusterId: slurmId })).json as Array<{ id: string }>
    )[0]!.id;
  }
  expect((await call('listSlurmNodePools', { clusterId: slurmId })).json.length).toBeGreaterThan(0);
  if (has('getSlurmNodePool')) await call('getSlurmNodePool', { clusterId: slurmId, poolId: slurmPoolId });
  if (has('addSlurmUser')) {
    const key = fakeSshKey();
    await call('addSlurmUser', { id: slurmId }, { username: 'alice', sshKeys: [key] });
    expect((await call('listSlurmUsers', { id: slurmId })).json).toHaveLength(1);
    await call('getSlurmUser', { id: slurmId, username: 'alice' });
    await call(
      'updateSlurmUser',
      { id: slurmId, username: 'alice' },
      { sshKeys: [key, fakeSshKey('ssh-rsa')] },
    );
    await call('deleteSlurmUser', { id: slurmId, username: 'alice' });
  }
  if (has('deleteSlurmNodePool'))
    await call('deleteSlurmNodePool', { clusterId: slurmId, poolId: slurmPoolId });
  if (has('deleteSlurmCluster')) await call('deleteSlurmCluster', { id: slurmId });
  if (has('listCapacity')) expect((await call('listCapacity')).json.length).toBeGreaterThan(0);
}

const normalise = (method: string, path: string) => `${method} ${path.replace(/\{\w+\}/g, '{}')}`;

describe.each(SHAPES)('shape %s', (shape) => {
  it('implements every operation of its route table with the success status', async () => {
    t = await startTestSim(shape);
    const { call, seen } = caller(shape);
    await walk(shape, call);
    const missing = operationsOf(shape).filter((op) => !seen.has(op));
    expect(missing).toEqual([]);
  });

  it('answers unknown resources with a listed error and a message, and other shapes’ routes with 404', async () => {
    t = await startTestSim(shape);
    for (const op of operationsOf(shape)) {
      const route = ROUTES[shape][op]!;
      if (op === 'createProject' || op.startsWith('list')) continue;
      const r = await t.cloud(route.method, pathOf(shape, op, { username: 'nobody' }), {
        ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { body: {} }),
        ...(route.projectHeader ? {} : { project: null }),
      });
      expect(route.errors, `${op} answered ${r.status}: ${r.text}`).toContain(r.status);
      expect(typeof r.json.message, op).toBe('string');
    }
    const own = new Set(
      operationsOf(shape).map((op) => normalise(ROUTES[shape][op]!.method, ROUTES[shape][op]!.path)),
    );
    for (const other of SHAPES.filter((s) => s !== shape)) {
      for (const op of operationsOf(other)) {
        const route = ROUTES[other][op]!;
        if (own.has(normalise(route.method, route.path))) continue;
        const r = await t.cloud(
          route.method,
          pathOf(other, op, {}),
          route.method === 'GET' ? {} : { body: {} },
        );
        expect(r.status, `${other}.${op} ${route.method} ${route.path} in shape ${shape}`).toBe(404);
        expect(r.json.message).toMatch(/^No operation/);
      }
    }
    const nowhere = await t.http('GET', `${t.sim.info.cloudUrl.replace('/api/v1alpha1', '')}/nowhere`);
    expect(nowhere.status).toBe(404);
  });
});
