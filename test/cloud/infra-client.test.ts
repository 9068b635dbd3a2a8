import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CloudConflictError,
  CloudForbiddenError,
  CloudNotFoundError,
  CloudSchemaError,
  CloudUnsupportedError,
  createInfraClient,
  type InfraClient,
  type InfraClientOptions,
  OPERATIONS,
  parseRouteOverrides,
  resolveRoutes,
  type Shape,
  staticToken,
} from '../../src/cloud/index.js';
import { AppError, ErrorCode, ValidationError } from '../../src/errors.js';
import { type ScriptedServer, startScriptedServer } from '../fakes/scripted-http-server.js';
import { INSTANCE_ID as ID, instanceBody as instance, PROJECT } from './instance-fixtures.js';
import { ed25519PublicKey, mislabelledKey, rsaPublicKey } from './ssh-key-fixtures.js';

const OTHER_PROJECT = '11111111-2222-4333-8444-555555555555';
const FS_ID = '8a4b7c1d-0000-4000-8000-0000000000f5';
const KUBECONFIG =
  'apiVersion: v1\nkind: Config\nclusters:\n- name: c1\n  cluster:\n    server: https://k8s.example\n';

let api: ScriptedServer;
let client: InfraClient | undefined;

beforeEach(async () => {
  api = await startScriptedServer();
});
afterEach(async () => {
  await client?.close();
  client = undefined;
  api.assertNoUnexpected();
  await api.close();
});

function make(shape: Shape, extra: Partial<InfraClientOptions> = {}): InfraClient {
  client = createInfraClient({
    baseUrl: `${api.url}/api/v1alpha1`,
    shape,
    projectId: PROJECT,
    tokens: staticToken('t'),
    retry: { maxAttempts: 1 },
    ...extra,
  });
  return client;
}
const P = (path: string) => `/api/v1alpha1${path}`;

describe('responses are validated', () => {
  it('a missing required field is a schema error naming the operation and the field', async () => {
    const broken = instance();
    delete (broken as Record<string, unknown>).state;
    api.on('GET', P('/instances'), { json: [instance(), broken] });
    const err = await make('B')
      .listInstances()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudSchemaError);
    expect(err).toMatchObject({ code: ErrorCode.CloudSchema, operation: 'listInstances', path: '[1].state' });
    expect((err as Error).message).toContain('listInstances');
    expect((err as Error).message).toContain('[1].state (required field missing, expected string)');
  });

  it('a nested missing field is named by its full path', async () => {
    api.on('GET', P(`/kubernetes/clusters/${ID}/node-pools`), {
      json: [
        {
          id: 'p1',
          name: 'gpu',
          cluster: 'c1',
          type: 'h100-hgx-80gb.8x',
          count: 1,
          version: 'v1.31',
          nodes: [{ name: 'n1', state: 'ready', kubeletVersion: 'v1.31', createdAt: 'x', conditions: [] }],
        },
      ],
    });
    await expect(make('B').listK8sNodePools({ clusterId: ID })).rejects.toMatchObject({
      path: '[0].nodes[0].instanceID',
      operation: 'listK8sNodePools',
    });
  });

  it('unknown extra fields and new state values are accepted and kept', async () => {
    api.on('GET', P(`/instances/${ID}`), { json: instance({ state: 'hibernating', zone: 'eu-north-1a' }) });
    const got = await make('B').getInstance({ id: ID });
    expect(got.state).toBe('hibernating');
    expect((got as Record<string, unknown>).zone).toBe('eu-north-1a');
  });

  it('images in responses are bare names even if the server adds image://', async () => {
    api.on('GET', P(`/instances/${ID}`), { json: instance({ image: 'image://ubuntu22.04' }) });
    expect((await make('B').getInstance({ id: ID })).image).toBe('ubuntu22.04');
  });

  it('shape B demands filesystems on an instance, shape A does not and reads cluster_id', async () => {
    const a = instance({ cluster_id: ID });
    delete (a as Record<string, unknown>).filesystems;
    api.on('GET', P(`/instances/${ID}`), { json: a });
    expect((await make('A').getInstance({ id: ID })).cluster_id).toBe(ID);
    await client!.close();
    await expect(make('B').getInstance({ id: ID })).rejects.toMatchObject({ path: 'filesystems' });
  });

  it('a success answer that is not JSON is a schema error, not a crash', async () => {
    api.on('GET', P('/instances'), { headers: { 'content-type': 'application/json' }, text: '<html>oops' });
    await expect(make('B').listInstances()).rejects.toBeInstanceOf(CloudSchemaError);
  });
});

describe('error answers become typed errors', () => {
  it('404 carries status, the server message, the operation and the request id', async () => {
    api.on('GET', P(`/instances/${ID}`), {
      status: 404,
      headers: { 'x-request-id': 'req-42' },
      json: { message: 'instance not found' },
    });
    const err = await make('B')
      .getInstance({ id: ID })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudNotFoundError);
    expect(err).toMatchObject({
      status: 404,
      kind: 'not_found',
      serverMessage: 'instance not found',
      operation: 'getInstance',
      requestId: 'req-42',
      code: ErrorCode.CloudApi,
    });
    expect((err as Error).message).toBe(
      'getInstance failed with HTTP 404: instance not found — it does not exist or belongs to another project.',
    );
  });

  it('409 and 403 map to their own classes', async () => {
    api.on('POST', P(`/instances/${ID}/actions/start`), {
      status: 409,
      json: { message: 'instance is running' },
    });
    api.on('GET', P('/kubernetes/clusters'), { status: 403, json: { message: 'forbidden' } });
    const c = make('B');
    await expect(c.startInstance({ id: ID })).rejects.toBeInstanceOf(CloudConflictError);
    await expect(c.listK8sClusters()).rejects.toBeInstanceOf(CloudForbiddenError);
  });
});

describe('routes, headers and bodies', () => {
  it('sends X-PROJECT-ID, and a per-call project wins over the default', async () => {
    api.on('GET', P('/instances'), { json: [] });
    const c = make('B');
    await c.listInstances();
    await c.listInstances({ projectId: OTHER_PROJECT });
    expect(api.requests.map((r) => r.headers['x-project-id'])).toEqual([PROJECT, OTHER_PROJECT]);
  });

  it('creating a project carries no project header', async () => {
    api.on('POST', P('/projects'), {
      status: 201,
      json: { id: PROJECT, name: 'ml', state: 'active', tags: {} },
    });
    await make('B').createProject({ name: 'ml', tags: { team: 'ml' } });
    expect(api.requests[0]!.headers['x-project-id']).toBeUndefined();
    expect(api.requests[0]!.json).toEqual({ name: 'ml', tags: { team: 'ml' } });
  });

  it('without any project an operation that needs one is refused before sending', async () => {
    const c = make('B', { projectId: undefined });
    const err = await c.listInstances().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as Error).message).toBe(
      'No project: bind one with /gpu project use or set CLOUD_PROJECT_ID.',
    );
    expect(api.requests).toHaveLength(0);
  });

  it('sends X-ORG-ID in shape C only', async () => {
    api.on('GET', P('/instances'), { json: [] });
    await make('C', { orgId: 'org-7' }).listInstances();
    await client!.close();
    await make('B', { orgId: 'org-7' }).listInstances();
    expect(api.requests.map((r) => r.headers['x-org-id'])).toEqual(['org-7', undefined]);
  });

  it('start/stop answer 202 with nothing in A and B, 200 with the instance in C', async () => {
    api.on('POST', P(`/instances/${ID}/actions/stop`), { status: 202 });
    await expect(make('A').stopInstance({ id: ID })).resolves.toBeUndefined();
    await client!.close();
    api.on('POST', P(`/instances/${ID}/actions/stop`), {
      status: 200,
      json: instance({ state: 'stopping' }),
    });
    await expect(make('C').stopInstance({ id: ID })).resolves.toMatchObject({ id: ID, state: 'stopping' });
  });

  it('fills shape A cluster defaults: CIDR blocks 10.233.0.0/18 and 10.233.64.0/18', async () => {
    api.on('POST', P('/kubernetes/clusters'), { status: 201, json: { id: ID, name: 'k', version: 'v1.31' } });
    await make('A').createK8sCluster({ name: 'k', version: 'v1.31' });
    expect(api.requests[0]!.json).toEqual({
      name: 'k',
      version: 'v1.31',
      podCIDRBlock: '10.233.0.0/18',
      serviceCIDRBlock: '10.233.64.0/18',
    });
  });

  it('sends image references with image:// and the default image when none is given', async () => {
    api.on('POST', P('/instances'), { status: 201, json: instance() });
    const c = make('B');
    await c.createInstance({ name: 'a', type: 'cpu.16x' });
    await c.createInstance({ name: 'b', type: 'cpu.16x', image: 'debian12', filesystems: [FS_ID] });
    expect(api.requests.map((r) => (r.json as { image: string }).image)).toEqual([
      'image://ubuntu22.04',
      'image://debian12',
    ]);
    expect((api.requests[1]!.json as { filesystems: string[] }).filesystems).toEqual([FS_ID]);
  });

  it('kubeconfig: decodes the base64 the reference sends, and takes raw YAML as is', async () => {
    const path = P(`/kubernetes/clusters/${ID}/credentials`);
    api.on('GET', path, {
      headers: { 'content-type': 'application/yaml' },
      text: Buffer.from(KUBECONFIG).toString('base64'),
    });
    const c = make('B');
    expect(await c.getKubeconfig({ clusterId: ID })).toBe(KUBECONFIG);
    api.on('GET', path, { headers: { 'content-type': 'application/yaml' }, text: KUBECONFIG });
    expect(await c.getKubeconfig({ clusterId: ID })).toBe(KUBECONFIG);
    expect(api.requests[0]!.headers.accept).toMatch(/application\/yaml/);
  });

  it('shape C lists node pools with ?cluster= and creates them naming the cluster', async () => {
    api.on('GET', P('/node-pools'), { json: [] });
    api.on('GET', P(`/clusters/${ID}`), { json: { id: ID, name: 'prod', version: 'v1.31' } });
    api.on('POST', P('/node-pools'), (req) => ({
      status: 201,
      json: { id: 'p1', version: 'v1.31', ...(req.json as object) },
    }));
    const c = make('C');
    await c.listK8sNodePools({ clusterId: ID });
    await c.listK8sNodePools();
    expect(api.requests.map((r) => r.query.get('cluster'))).toEqual([ID, null]);
    const pool = await c.createK8sNodePool({
      clusterId: ID,
      name: 'gpu',
      type: 'h100-hgx-80gb.8x',
      count: 2,
    });
    expect(pool.cluster).toBe('prod');
    expect(api.requests.at(-1)!.json).toEqual({
      name: 'gpu',
      type: 'h100-hgx-80gb.8x',
      count: 2,
      cluster: 'prod',
    });
    await c.createK8sNodePool({ clusterName: 'prod', name: 'gpu2', type: 'cpu.16x', count: 1 });
    expect(api.count('GET', P(`/clusters/${ID}`))).toBe(1);
  });

  it('path values are URL-encoded', async () => {
    api.on('DELETE', P(`/slurm/clusters/${ID}/users/a%2Fb`), { status: 204 });
    await make('A').deleteSlurmUser({ clusterId: ID, username: 'a/b' });
    expect(api.requests).toHaveLength(1);
  });
});

describe('operations the shape lacks', () => {
  it('throw CloudUnsupportedError before any I/O', async () => {
    const a = make('A');
    const err = await a.createFilesystem({ name: 'x', size: '1Ti' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudUnsupportedError);
    expect((err as Error).message).toBe('createFilesystem is not available in shape A.');
    await expect(a.listCapacity()).rejects.toBeInstanceOf(CloudUnsupportedError);
    await client!.close();
    const b = make('B');
    await expect(b.listProjects()).rejects.toThrow('listProjects is not available in shape B.');
    await expect(b.addSlurmUser({ clusterId: ID, username: 'x', sshKeys: [] })).rejects.toBeInstanceOf(
      CloudUnsupportedError,
    );
    await client!.close();
    const c = make('C');
    await expect(c.registerK8sCluster({ name: 'x', kubeconfig: KUBECONFIG })).rejects.toBeInstanceOf(
      CloudUnsupportedError,
    );
    expect(api.requests).toHaveLength(0);
  });

  it('the client lists the operations of its shape: A 25, B 26, C 25', () => {
    expect(make('A').operations()).toHaveLength(25);
    expect(make('B').operations()).toHaveLength(26);
    expect(make('C').operations()).toHaveLength(25);
    expect(client!.supports('listCapacity')).toBe(true);
    // Every operation has a method on the client.
    for (const op of OPERATIONS)
      expect(typeof (client as unknown as Record<string, unknown>)[op]).toBe('function');
  });
});

describe('inputs are checked before anything is sent', () => {
  const cases: Array<[string, Shape, (c: InfraClient) => Promise<unknown>, string, RegExp]> = [
    ['missing name', 'B', (c) => c.createInstance({ type: 'cpu.16x' } as never), 'name', /is required/],
    [
      'tag key',
      'B',
      (c) => c.createInstance({ name: 'a', type: 'cpu.16x', tags: { '-bad': 'x' } }),
      'tags',
      /1 to 63 characters/,
    ],
    [
      'tag key length',
      'B',
      (c) => c.createProject({ name: 'p', tags: { ['k'.repeat(64)]: 'v' } }),
      'tags',
      /63/,
    ],
    [
      'image reference',
      'B',
      (c) => c.createInstance({ name: 'a', type: 'cpu.16x', image: 'image://bad name' }),
      'image',
      /image:\/\//,
    ],
    [
      'base64 user data',
      'B',
      (c) => c.createInstance({ name: 'a', type: 'cpu.16x', userData: '#cloud-config' }),
      'userData',
      /base64/,
    ],
    [
      'filesystems in shape A',
      'A',
      (c) => c.createInstance({ name: 'a', type: 'cpu.16x', filesystems: [FS_ID] }),
      'filesystems',
      /not available in shape A/,
    ],
    [
      'filesystem ids',
      'B',
      (c) => c.createInstance({ name: 'a', type: 'cpu.16x', filesystems: ['scratch'] }),
      'filesystems[0]',
      /UUID/,
    ],
    ['filesystem size', 'B', (c) => c.createFilesystem({ name: 'f', size: '512' }), 'size', /unit/],
    ['version pattern', 'A', (c) => c.updateK8sCluster({ id: ID, version: '1.31' }), 'version', /v1\.31/],
    [
      'version on create',
      'B',
      (c) => c.createK8sCluster({ name: 'k', version: 'latest' }),
      'version',
      /looks like v1\.31/,
    ],
    ['version required in A', 'A', (c) => c.createK8sCluster({ name: 'k' }), 'version', /is required/],
    [
      'pod CIDR',
      'A',
      (c) => c.createK8sCluster({ name: 'k', version: 'v1.31', podCIDRBlock: '10.233.0.0/33' }),
      'podCIDRBlock',
      /CIDR/,
    ],
    [
      'service CIDR',
      'A',
      (c) => c.createK8sCluster({ name: 'k', version: 'v1.31', serviceCIDRBlock: '300.1.1.1/18' }),
      'serviceCIDRBlock',
      /CIDR/,
    ],
    [
      'CIDR outside shape A',
      'B',
      (c) => c.createK8sCluster({ name: 'k', podCIDRBlock: '10.0.0.0/16' }),
      'podCIDRBlock',
      /only available in shape A/,
    ],
    [
      'node count',
      'B',
      (c) => c.createK8sNodePool({ clusterId: ID, name: 'p', type: 'cpu.16x', count: 0 }),
      'count',
      /at least 1/,
    ],
    [
      'Slurm username',
      'A',
      (c) => c.addSlurmUser({ clusterId: ID, username: 'Alice', sshKeys: [ed25519PublicKey()] }),
      'username',
      /lowercase/,
    ],
    [
      'Slurm user needs a key',
      'A',
      (c) => c.addSlurmUser({ clusterId: ID, username: 'alice', sshKeys: [] }),
      'sshKeys',
      /at least one/,
    ],
    [
      'SSH key type',
      'A',
      (c) => c.addSlurmUser({ clusterId: ID, username: 'alice', sshKeys: ['ssh-foo AAAA'] }),
      'sshKeys[0]',
      /not accepted/,
    ],
    [
      'SSH key blob matches its type',
      'A',
      (c) =>
        c.updateSlurmUser({ clusterId: ID, username: 'alice', sshKeys: [rsaPublicKey(), mislabelledKey()] }),
      'sshKeys[1]',
      /says "ssh-rsa" but its data is a "ssh-ed25519" key/,
    ],
    ['nothing to update', 'A', (c) => c.updateK8sCluster({ id: ID }), 'version', /version or labels/],
    ['project id', 'B', (c) => c.listInstances({ projectId: 'not-a-uuid' }), 'projectId', /UUID/],
    ['missing path id', 'B', (c) => c.getK8sNodePool({ poolId: 'p1' }), 'clusterId', /is required/],
  ];

  for (const [what, shape, call, field, rule] of cases) {
    it(`rejects a bad ${what}, naming ${field}`, async () => {
      const err = await call(make(shape)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).field).toBe(field);
      expect((err as Error).message).toMatch(rule);
      expect((err as Error).message.startsWith(field)).toBe(true);
      expect(api.requests).toHaveLength(0);
      if (process.env.SHOW_MESSAGES) console.log((err as Error).message);
    });
  }

  it('accepts good SSH keys of both common types', async () => {
    api.on('POST', P(`/slurm/clusters/${ID}/users`), (req) => ({ status: 201, json: req.json }));
    const user = await make('A').addSlurmUser({
      clusterId: ID,
      username: 'alice',
      sshKeys: [ed25519PublicKey(), rsaPublicKey()],
    });
    expect(user).toMatchObject({ username: 'alice', sudo: false });
    expect((api.requests[0]!.json as { sudo: boolean }).sudo).toBe(false);
  });
});

describe('route overrides (CLOUD_ROUTES)', () => {
  it('takes JSON or @file, and the client then uses the new route', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'routes-'));
    const file = join(dir, 'routes.json');
    writeFileSync(file, JSON.stringify({ addSlurmUser: 'POST /slurm/clusters/{cluster_id}/members 200' }));
    const fromFile = parseRouteOverrides(`@${file}`, (p) => readFileSync(p, 'utf8'));
    rmSync(dir, { recursive: true });
    const inline = parseRouteOverrides(
      '{"addSlurmUser":"POST /slurm/clusters/{cluster_id}/members 200"}',
      () => '',
    );
    expect(fromFile).toEqual(inline);

    api.on('POST', P(`/slurm/clusters/${ID}/members`), (req) => ({ status: 200, json: req.json }));
    const c = make('A', { routes: resolveRoutes('A', fromFile) });
    expect(c.routes.addSlurmUser).toMatchObject({ method: 'POST', success: 200, source: 'choice' });
    await c.addSlurmUser({ clusterId: ID, username: 'bob', sshKeys: [ed25519PublicKey()] });
    expect(api.requests).toHaveLength(1);
  });

  it('can add an operation the shape lacks', async () => {
    api.on('GET', P('/projects'), { json: [{ id: PROJECT, name: 'ml', state: 'active', tags: {} }] });
    const c = make('B', { routes: resolveRoutes('B', { listProjects: 'GET /projects' }) });
    expect(await c.listProjects()).toHaveLength(1);
  });

  it('rejects bad overrides with a sentence naming CLOUD_ROUTES', () => {
    const read = () => '';
    expect(parseRouteOverrides(undefined, read)).toEqual({});
    expect(parseRouteOverrides('  ', read)).toEqual({});
    expect(() => parseRouteOverrides('{nope', read)).toThrow(/CLOUD_ROUTES is not valid JSON/);
    expect(() => parseRouteOverrides('["x"]', read)).toThrow(/must be a JSON object/);
    expect(() => parseRouteOverrides('{"addSlurmUsr":"POST /x"}', read)).toThrow(
      /unknown operation "addSlurmUsr"/,
    );
    expect(() => parseRouteOverrides('{"addSlurmUser":"SEND /x"}', read)).toThrow(/must look like/);
    expect(() => parseRouteOverrides('{"getInstance":"GET /instances/{instance}"}', read)).toThrow(
      /getInstance uses \{instance\}/,
    );
    expect(() => parseRouteOverrides('@/nonexistent/routes.json', (p) => readFileSync(p, 'utf8'))).toThrow(
      /names the file \/nonexistent\/routes.json, which could not be read \(ENOENT\)/,
    );
    // A configuration error (exit status and wording of config errors), not a crash.
    expect(() => parseRouteOverrides('{nope', read)).toThrow(AppError);
    expect(() => parseRouteOverrides('{nope', read)).toThrow(
      expect.objectContaining({ code: ErrorCode.Config }),
    );
  });
});
