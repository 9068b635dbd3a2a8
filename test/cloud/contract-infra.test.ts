import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  CloudAuthError,
  CloudBadRequestError,
  CloudConflictError,
  CloudForbiddenError,
  CloudNotAvailableError,
  CloudNotFoundError,
  CloudUnsupportedError,
  createHttpClient,
  createInfraClient,
  type InfraClient,
  type Instance,
  OPERATIONS,
  type Operation,
  type Shape,
  staticToken,
} from '../../src/cloud/index.js';
import { type RunningSim, startSim } from '../../src/sim/start-sim.js';
import { ed25519PublicKey, rsaPublicKey } from './ssh-key-fixtures.js';

// The client against the real simulator, every operation of every shape, including the error
// statuses. The simulator runs on a manual clock: transitions happen when the test advances it.

const TRANSITION_MS = 1000;
const GPU_TYPE = 'rtx-a5000-24gb.1x';

/** Wraps a client so the test can prove every operation of the shape was exercised. */
function recording(client: InfraClient, called: Set<string>): InfraClient {
  return new Proxy(client, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (typeof prop === 'string' && (OPERATIONS as readonly string[]).includes(prop)) called.add(prop);
      return value;
    },
  });
}

describe.each(['A', 'B', 'C'] as const)('contract: shape %s against the simulator', (shape: Shape) => {
  let sim: RunningSim;
  let client: InfraClient;
  const called = new Set<string>();
  const others: InfraClient[] = [];

  const advance = () => sim.clock.advance(TRANSITION_MS);
  const other = (c: InfraClient) => {
    others.push(c);
    return c;
  };

  beforeAll(async () => {
    sim = await startSim({
      shape,
      clock: 'manual',
      transitionMs: TRANSITION_MS,
      metrics: false,
      log: () => {},
    });
    client = recording(
      createInfraClient({
        baseUrl: sim.info.cloudUrl,
        shape,
        tokens: staticToken(sim.info.cloudToken),
        projectId: sim.info.projectId,
        retry: { maxAttempts: 1 },
      }),
      called,
    );
  });
  afterEach(() => {
    sim.control.clearFaults();
  });
  afterAll(async () => {
    await Promise.all([client.close(), ...others.map((c) => c.close())]);
    await sim.close();
  });

  it('projects', async () => {
    const project = await client.createProject({ name: 'contract', tags: { team: 'ml' } });
    expect(project).toMatchObject({ name: 'contract' });
    if (shape !== 'C') expect(project).toMatchObject({ state: 'active', tags: { team: 'ml' } });
    if (client.supports('listProjects')) {
      const all = await client.listProjects();
      expect(all.map((p) => p.id)).toContain(project.id);
      expect(await client.getProject({ id: project.id })).toMatchObject({ id: project.id, name: 'contract' });
      await client.deleteProject({ id: project.id });
      await advance();
      await expect(client.getProject({ id: randomUUID() })).rejects.toBeInstanceOf(CloudNotFoundError);
    }
  });

  it('instances: create, settle, stop, start, 409 on a wrong-state action, delete, 404', async () => {
    const userData = Buffer.from('#cloud-config\npackages: [htop]\n').toString('base64');
    const created = await client.createInstance({
      name: 'c-1',
      type: GPU_TYPE,
      userData,
      tags: { owner: 'alice' },
    });
    expect(created).toMatchObject({ name: 'c-1', type: GPU_TYPE, image: 'ubuntu22.04', preemptible: false });
    expect(created.userData).toBe(userData);
    if (shape === 'A') expect(created.filesystems).toBeUndefined();
    else expect(created.filesystems).toEqual([]);

    await advance();
    const running = await client.getInstance({ id: created.id });
    expect(running.state).toBe('running');
    expect((await client.listInstances()).map((i) => i.id)).toContain(created.id);

    const startRunning = await client.startInstance({ id: created.id }).catch((e: unknown) => e);
    expect(startRunning).toBeInstanceOf(CloudConflictError);
    expect(startRunning).toMatchObject({ status: 409, operation: 'startInstance' });

    const stopped = await client.stopInstance({ id: created.id });
    // C answers 200 with the instance; A and B 202, which the client reads as nothing.
    if (shape === 'C') expect((stopped as Instance).state).toBe('stopping');
    else expect(stopped).toBeUndefined();
    await advance();
    expect((await client.getInstance({ id: created.id })).state).toBe('stopped');
    await client.startInstance({ id: created.id });
    await advance();
    expect((await client.getInstance({ id: created.id })).state).toBe('running');

    await client.deleteInstance({ id: created.id });
    await advance();
    const gone = await client.getInstance({ id: created.id }).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(CloudNotFoundError);
    expect((gone as CloudNotFoundError).serverMessage).toBeTruthy();
    expect((gone as CloudNotFoundError).requestId).toBeTruthy();
  });

  it('filesystems (B, C) and attaching one to an instance', async () => {
    if (!client.supports('createFilesystem')) {
      await expect(client.createFilesystem({ name: 'x', size: '1Ti' })).rejects.toBeInstanceOf(
        CloudUnsupportedError,
      );
      return;
    }
    const fs = await client.createFilesystem({ name: 'datasets', size: '512Gi' });
    expect(fs).toMatchObject({ name: 'datasets', size: '512Gi' });
    expect(await client.getFilesystem({ id: fs.id })).toMatchObject({ id: fs.id });
    const inst = await client.createInstance({ name: 'with-fs', type: GPU_TYPE, filesystems: [fs.id] });
    expect(inst.filesystems).toEqual([fs.id]);
    await client.deleteInstance({ id: inst.id });
    await advance();
    if (client.supports('listFilesystems')) {
      expect((await client.listFilesystems()).map((f) => f.id)).toContain(fs.id);
      await client.deleteFilesystem({ id: fs.id });
      await advance();
      await expect(client.getFilesystem({ id: fs.id })).rejects.toBeInstanceOf(CloudNotFoundError);
    }
  });

  it('Kubernetes clusters, node pools and kubeconfig', async () => {
    const cluster =
      shape === 'A'
        ? await client.createK8sCluster({
            name: 'k-main',
            version: 'v1.31.2',
            defaultNodePool: { create: true, name: 'default', type: GPU_TYPE, count: 1 },
          })
        : await client.createK8sCluster({ name: 'k-main', version: 'v1.31.2' });
    expect(cluster).toMatchObject({ name: 'k-main', version: 'v1.31.2' });
    await advance();
    expect((await client.listK8sClusters()).map((c) => c.id)).toContain(cluster.id);
    expect(await client.getK8sCluster({ id: cluster.id })).toMatchObject({ id: cluster.id });

    const kubeconfig = await client.getKubeconfig({ clusterId: cluster.id }).catch((e: unknown) => e);
    if (client.supports('getKubeconfig')) {
      expect(kubeconfig).toMatch(/apiVersion: v1/);
      expect(kubeconfig).toMatch(/kind: Config/);
    } else {
      expect(kubeconfig).toBeInstanceOf(CloudUnsupportedError);
    }

    if (client.supports('createK8sNodePool')) {
      const pool = await client.createK8sNodePool({
        clusterId: cluster.id,
        name: 'gpus',
        type: GPU_TYPE,
        count: 2,
      });
      expect(pool).toMatchObject({ name: 'gpus', cluster: 'k-main', type: GPU_TYPE, count: 2 });
      await advance();
      if (shape === 'C') expect(pool.nodes).toBeUndefined();
      const dup = await client
        .createK8sNodePool({ clusterId: cluster.id, name: 'gpus', type: GPU_TYPE, count: 1 })
        .catch((e: unknown) => e);
      expect(dup).toBeInstanceOf(CloudConflictError);
    }
    const pools = await client.listK8sNodePools({ clusterId: cluster.id });
    expect(pools.length).toBeGreaterThan(0);
    expect(pools.every((p) => p.cluster === 'k-main')).toBe(true);
    const first = pools[0]!;
    const got = await client.getK8sNodePool({ clusterId: cluster.id, poolId: first.id });
    expect(got).toMatchObject({ id: first.id, name: first.name });
    if (shape !== 'C') {
      expect(got.nodes?.length).toBe(got.count);
      expect(got.nodes?.[0]).toMatchObject({ state: expect.any(String), instanceID: expect.any(String) });
    }
    if (shape === 'A') {
      expect(got.nodes?.[0]?.publicIP).toEqual(expect.any(String));
    }

    if (client.supports('registerK8sCluster')) {
      const registered = await client.registerK8sCluster({
        name: 'k-edge',
        kubeconfig: 'apiVersion: v1\nkind: Config\n',
        labels: { region: 'eu' },
      });
      const updated = await client.updateK8sCluster({
        id: registered.id,
        version: 'v1.32',
        labels: { 'service.io/metrics-enabled': 'true' },
      });
      expect(updated.version).toBe('v1.32');
      expect(updated.labels).toEqual({ region: 'eu', 'service.io/metrics-enabled': 'true' });
    }

    if (client.supports('deleteK8sNodePool')) {
      await client.deleteK8sNodePool({ clusterId: cluster.id, poolId: first.id });
      await advance();
      await expect(client.getK8sNodePool({ clusterId: cluster.id, poolId: first.id })).rejects.toBeInstanceOf(
        CloudNotFoundError,
      );
    }
    await client.deleteK8sCluster({ id: cluster.id });
    await advance();
    await expect(client.getK8sCluster({ id: cluster.id })).rejects.toBeInstanceOf(CloudNotFoundError);
  });

  it('Slurm clusters, node pools and users', async () => {
    let clusterId: string;
    if (client.supports('createSlurmCluster')) {
      const created = await client.createSlurmCluster({ name: 'hpc', version: '24.05' });
      expect(created).toMatchObject({ name: 'hpc', version: '24.05' });
      clusterId = created.id;
      const pool = await client.createSlurmNodePool({ clusterId, name: 'gpu', type: GPU_TYPE, count: 2 });
      expect(pool).toMatchObject({ name: 'gpu', type: GPU_TYPE, count: 2 });
      await advance();
    } else {
      // A and C cannot create one: the simulator starts with slurm-1.
      const seeded = (await client.listSlurmClusters()).find((c) => c.name === 'slurm-1');
      expect(seeded).toBeDefined();
      clusterId = seeded!.id;
    }
    const clusters = await client.listSlurmClusters();
    expect(clusters.map((c) => c.id)).toContain(clusterId);
    if (shape === 'C') expect(Object.keys(clusters[0]!).sort()).toEqual(['id', 'name']);

    const pools = await client.listSlurmNodePools({ clusterId });
    expect(pools.length).toBeGreaterThan(0);
    if (shape === 'C') {
      expect(Object.keys(pools[0]!).sort()).toEqual(['id', 'name', 'type']);
    } else {
      const cluster = await client.getSlurmCluster({ id: clusterId });
      expect(cluster.loginNodes?.length ?? 0).toBeGreaterThan(0);
      const pool = await client.getSlurmNodePool({ clusterId, poolId: pools[0]!.id });
      expect(pool.nodes?.length).toBe(pool.count);
      expect(pool.nodes?.[0]?.states.length).toBeGreaterThan(0);
    }

    if (client.supports('addSlurmUser')) {
      const key = ed25519PublicKey();
      const user = await client.addSlurmUser({ clusterId, username: 'alice', sshKeys: [key] });
      expect(user).toEqual({ username: 'alice', sshKeys: [key], sudo: false });
      const dup = await client
        .addSlurmUser({ clusterId, username: 'alice', sshKeys: [key] })
        .catch((e: unknown) => e);
      expect(dup).toBeInstanceOf(CloudConflictError);
      expect((await client.listSlurmUsers({ clusterId })).map((u) => u.username)).toContain('alice');
      const second = rsaPublicKey();
      const updated = await client.updateSlurmUser({
        clusterId,
        username: 'alice',
        sshKeys: [key, second],
        sudo: true,
      });
      expect(updated).toMatchObject({ sshKeys: [key, second], sudo: true });
      // sudo omitted on update keeps the current value.
      expect(await client.updateSlurmUser({ clusterId, username: 'alice', sshKeys: [key] })).toMatchObject({
        sudo: true,
      });
      expect(await client.getSlurmUser({ clusterId, username: 'alice' })).toMatchObject({ sudo: true });
      await client.deleteSlurmUser({ clusterId, username: 'alice' });
      await expect(client.getSlurmUser({ clusterId, username: 'alice' })).rejects.toBeInstanceOf(
        CloudNotFoundError,
      );
    }

    if (client.supports('deleteSlurmNodePool')) {
      await client.deleteSlurmNodePool({ clusterId, poolId: pools[0]!.id });
      await advance();
      await client.deleteSlurmCluster({ id: clusterId });
      await advance();
      await expect(client.getSlurmCluster({ id: clusterId })).rejects.toBeInstanceOf(CloudNotFoundError);
    }
  });

  it('capacity (C) shrinks as instances are created', async () => {
    if (!client.supports('listCapacity')) {
      await expect(client.listCapacity()).rejects.toBeInstanceOf(CloudUnsupportedError);
      return;
    }
    const before = (await client.listCapacity()).find((c) => c.name === GPU_TYPE)!.capacity;
    const inst = await client.createInstance({ name: 'cap-1', type: GPU_TYPE });
    const after = (await client.listCapacity()).find((c) => c.name === GPU_TYPE)!.capacity;
    expect(after).toBe(before - 1);
    await client.deleteInstance({ id: inst.id });
    await advance();
  });

  it('errors: 404 unknown id, 400 raw bad body, 401 wrong token, 403 foreign project (A, B), 501', async () => {
    const unknown = await client.getInstance({ id: randomUUID() }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(CloudNotFoundError);
    expect((unknown as Error).message).toMatch(/^getInstance failed with HTTP 404: .+ — it does not exist/);

    // A body the client would refuse, sent raw to prove the server's own validation and our mapping.
    const http = createHttpClient({
      baseUrl: sim.info.cloudUrl,
      auth: { kind: 'bearer', tokens: staticToken(sim.info.cloudToken) },
      retry: { maxAttempts: 1 },
    });
    try {
      const bad = await http
        .send({
          operation: 'createInstance',
          method: 'POST',
          path: '/instances',
          headers: { 'x-project-id': sim.info.projectId },
          body: { name: 'raw', type: GPU_TYPE, userData: 'not base64!' },
        })
        .catch((e: unknown) => e);
      expect(bad).toBeInstanceOf(CloudBadRequestError);
      expect((bad as CloudBadRequestError).serverMessage).toMatch(/userData/);
    } finally {
      await http.close();
    }

    const wrong = other(
      createInfraClient({
        baseUrl: sim.info.cloudUrl,
        shape,
        tokens: staticToken('not-the-token'),
        projectId: sim.info.projectId,
      }),
    );
    const denied = await wrong.listInstances().catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(CloudAuthError);
    expect(denied).toMatchObject({ status: 401, code: 'auth_failed' });

    if (shape !== 'C') {
      const foreign = (sim.control.state().projects as Array<{ id: string; member: boolean }>).find(
        (p) => !p.member,
      );
      const forbidden = await client.listInstances({ projectId: foreign!.id }).catch((e: unknown) => e);
      expect(forbidden).toBeInstanceOf(CloudForbiddenError);
    }

    sim.control.addFault({ operation: 'listInstances', status: 501, count: 1 });
    const na = await client.listInstances().catch((e: unknown) => e);
    expect(na).toBeInstanceOf(CloudNotAvailableError);
    expect((na as Error).message).toMatch(/^listInstances is not available on this cloud/);
  });

  it('exercised every operation of the shape', () => {
    const expected = OPERATIONS.filter((op: Operation) => client.supports(op));
    expect(expected).toHaveLength(shape === 'B' ? 26 : 25);
    expect(expected.filter((op) => !called.has(op))).toEqual([]);
  });
});
