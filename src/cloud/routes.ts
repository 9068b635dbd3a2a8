import type { Shape } from './shape.js';

// One route table per shape: the only place that says which HTTP method and path an operation uses.
// `source` says where the fact comes from, so docs/cloud-api.md and reviewers can check it:
//   spec      — the cloud's interface contract states it (summarised in docs/cloud-api.md)
//   reference — a public OpenAPI document of the real service states it (see docs/cloud-api.md)
//   choice    — neither says; ours, overridable with CLOUD_ROUTES without a code change

export const OPERATIONS = [
  'createProject',
  'listProjects',
  'getProject',
  'deleteProject',
  'createInstance',
  'listInstances',
  'getInstance',
  'deleteInstance',
  'startInstance',
  'stopInstance',
  'createFilesystem',
  'listFilesystems',
  'getFilesystem',
  'deleteFilesystem',
  'listK8sClusters',
  'createK8sCluster',
  'registerK8sCluster',
  'getK8sCluster',
  'updateK8sCluster',
  'deleteK8sCluster',
  'listK8sNodePools',
  'createK8sNodePool',
  'getK8sNodePool',
  'deleteK8sNodePool',
  'getKubeconfig',
  'listSlurmClusters',
  'createSlurmCluster',
  'getSlurmCluster',
  'deleteSlurmCluster',
  'listSlurmNodePools',
  'createSlurmNodePool',
  'getSlurmNodePool',
  'deleteSlurmNodePool',
  'listSlurmUsers',
  'addSlurmUser',
  'getSlurmUser',
  'updateSlurmUser',
  'deleteSlurmUser',
  'listCapacity',
] as const;
export type Operation = (typeof OPERATIONS)[number];

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type RouteSource = 'spec' | 'reference' | 'choice';

export interface Route {
  readonly method: HttpMethod;
  /** Path relative to CLOUD_API_URL, with {param} placeholders. */
  readonly path: string;
  /** The status a success answers with. */
  readonly success: number;
  /** False for the operations that carry no X-PROJECT-ID ("no project header" in the spec). */
  readonly projectHeader: boolean;
  /** Error statuses the spec lists for this operation in this shape. */
  readonly errors: readonly number[];
  /** Where method and path come from. */
  readonly source: RouteSource;
  /** Where the success status comes from. */
  readonly successSource: RouteSource;
}

export type RouteTable = Partial<Record<Operation, Route>>;

const r = (
  method: HttpMethod,
  path: string,
  success: number,
  errors: readonly number[],
  source: RouteSource,
  extra: { projectHeader?: boolean; successSource?: RouteSource } = {},
): Route => ({
  method,
  path,
  success,
  errors,
  source,
  projectHeader: extra.projectHeader ?? true,
  successSource: extra.successSource ?? source,
});

// Error lists, as the spec's Endpoints tables give them.
const E = {
  create: [400, 403, 500, 501],
  createIn: [400, 403, 404, 500, 501],
  createConflict: [400, 403, 409, 500, 501],
  list: [403, 404, 500, 501],
  listNoProject: [403, 500, 501],
  get: [403, 404, 500, 501],
  getA: [400, 403, 404, 500, 501],
  action: [400, 403, 404, 409, 500, 501],
  addUser: [400, 403, 404, 409, 500, 501],
} as const;

// Shape B: the infrastructure API v1alpha1 document states every method, path and status.
const B: RouteTable = {
  createProject: r('POST', '/projects', 201, E.create, 'reference', { projectHeader: false }),
  createInstance: r('POST', '/instances', 201, E.createIn, 'reference'),
  listInstances: r('GET', '/instances', 200, E.list, 'reference'),
  getInstance: r('GET', '/instances/{id}', 200, E.get, 'reference'),
  deleteInstance: r('DELETE', '/instances/{id}', 204, E.get, 'reference'),
  startInstance: r('POST', '/instances/{id}/actions/start', 202, E.action, 'reference'),
  stopInstance: r('POST', '/instances/{id}/actions/stop', 202, E.action, 'reference'),
  createFilesystem: r('POST', '/filesystems', 201, E.create, 'reference'),
  getFilesystem: r('GET', '/filesystems/{id}', 200, E.get, 'reference'),
  listK8sClusters: r('GET', '/kubernetes/clusters', 200, E.listNoProject, 'reference'),
  createK8sCluster: r('POST', '/kubernetes/clusters', 201, E.createConflict, 'reference'),
  getK8sCluster: r('GET', '/kubernetes/clusters/{id}', 200, E.get, 'reference'),
  deleteK8sCluster: r('DELETE', '/kubernetes/clusters/{id}', 204, E.get, 'reference'),
  listK8sNodePools: r('GET', '/kubernetes/clusters/{clusterId}/node-pools', 200, E.list, 'reference'),
  createK8sNodePool: r(
    'POST',
    '/kubernetes/clusters/{clusterId}/node-pools',
    201,
    E.createConflict,
    'reference',
  ),
  getK8sNodePool: r('GET', '/kubernetes/clusters/{clusterId}/node-pools/{poolId}', 200, E.get, 'reference'),
  deleteK8sNodePool: r(
    'DELETE',
    '/kubernetes/clusters/{clusterId}/node-pools/{poolId}',
    204,
    E.get,
    'reference',
  ),
  getKubeconfig: r('GET', '/kubernetes/clusters/{clusterId}/credentials', 200, E.get, 'reference'),
  listSlurmClusters: r('GET', '/slurm/clusters', 200, E.listNoProject, 'reference'),
  createSlurmCluster: r('POST', '/slurm/clusters', 201, E.create, 'reference'),
  getSlurmCluster: r('GET', '/slurm/clusters/{id}', 200, E.get, 'reference'),
  deleteSlurmCluster: r('DELETE', '/slurm/clusters/{id}', 204, E.get, 'reference'),
  listSlurmNodePools: r('GET', '/slurm/clusters/{clusterId}/node-pools', 200, E.list, 'reference'),
  createSlurmNodePool: r(
    'POST',
    '/slurm/clusters/{clusterId}/node-pools',
    201,
    E.createConflict,
    'reference',
  ),
  getSlurmNodePool: r('GET', '/slurm/clusters/{clusterId}/node-pools/{poolId}', 200, E.get, 'reference'),
  deleteSlurmNodePool: r(
    'DELETE',
    '/slurm/clusters/{clusterId}/node-pools/{poolId}',
    204,
    E.get,
    'reference',
  ),
};

// Shape A: no public document. B's routes where the operation exists there; our choices for the rest.
const A: RouteTable = {
  createProject: B.createProject!,
  createInstance: B.createInstance!,
  listInstances: B.listInstances!,
  getInstance: B.getInstance!,
  deleteInstance: B.deleteInstance!,
  startInstance: B.startInstance!,
  stopInstance: B.stopInstance!,
  listK8sClusters: B.listK8sClusters!,
  createK8sCluster: r('POST', '/kubernetes/clusters', 201, E.createIn, 'reference'),
  registerK8sCluster: r('POST', '/kubernetes/clusters/register', 201, E.createIn, 'choice', {
    successSource: 'spec',
  }),
  getK8sCluster: r('GET', '/kubernetes/clusters/{id}', 200, E.getA, 'reference'),
  updateK8sCluster: r('PATCH', '/kubernetes/clusters/{id}', 200, E.getA, 'choice', { successSource: 'spec' }),
  deleteK8sCluster: B.deleteK8sCluster!,
  listK8sNodePools: B.listK8sNodePools!,
  getK8sNodePool: B.getK8sNodePool!,
  getKubeconfig: B.getKubeconfig!,
  listSlurmClusters: B.listSlurmClusters!,
  getSlurmCluster: B.getSlurmCluster!,
  listSlurmNodePools: B.listSlurmNodePools!,
  getSlurmNodePool: B.getSlurmNodePool!,
  listSlurmUsers: r('GET', '/slurm/clusters/{id}/users', 200, E.get, 'choice', { successSource: 'spec' }),
  addSlurmUser: r('POST', '/slurm/clusters/{id}/users', 201, E.addUser, 'choice', { successSource: 'spec' }),
  getSlurmUser: r('GET', '/slurm/clusters/{id}/users/{username}', 200, E.get, 'choice', {
    successSource: 'spec',
  }),
  updateSlurmUser: r('PUT', '/slurm/clusters/{id}/users/{username}', 200, E.createIn, 'choice', {
    successSource: 'spec',
  }),
  deleteSlurmUser: r('DELETE', '/slurm/clusters/{id}/users/{username}', 204, E.get, 'choice'),
};

// Shape C: the Atlas API 1.0.0 document covers projects, instances, filesystems and capacity
// (start/stop answer 200 with the instance). Its flat cluster and node-pool routes are our choice.
const C_ERR = {
  create: [400, 500, 501],
  createConflict: [400, 409, 500, 501],
  list: [500, 501],
  listSlurmPools: [404, 500, 501],
  get: [404, 500, 501],
  action: [400, 404, 409, 500, 501],
} as const;
const C: RouteTable = {
  createProject: r('POST', '/projects', 201, C_ERR.create, 'reference', { projectHeader: false }),
  listProjects: r('GET', '/projects', 200, C_ERR.list, 'reference', { projectHeader: false }),
  getProject: r('GET', '/projects/{id}', 200, C_ERR.get, 'reference', { projectHeader: false }),
  deleteProject: r('DELETE', '/projects/{id}', 204, C_ERR.get, 'reference', { projectHeader: false }),
  createInstance: r('POST', '/instances', 201, C_ERR.create, 'reference'),
  listInstances: r('GET', '/instances', 200, C_ERR.list, 'reference'),
  getInstance: r('GET', '/instances/{id}', 200, C_ERR.get, 'reference'),
  deleteInstance: r('DELETE', '/instances/{id}', 204, C_ERR.get, 'reference'),
  startInstance: r('POST', '/instances/{id}/actions/start', 200, C_ERR.action, 'reference'),
  stopInstance: r('POST', '/instances/{id}/actions/stop', 200, C_ERR.action, 'reference'),
  createFilesystem: r('POST', '/filesystems', 201, C_ERR.create, 'reference'),
  listFilesystems: r('GET', '/filesystems', 200, C_ERR.list, 'reference'),
  getFilesystem: r('GET', '/filesystems/{id}', 200, C_ERR.get, 'reference'),
  deleteFilesystem: r('DELETE', '/filesystems/{id}', 204, C_ERR.get, 'reference'),
  listK8sClusters: r('GET', '/clusters', 200, C_ERR.list, 'choice', { successSource: 'spec' }),
  createK8sCluster: r('POST', '/clusters', 201, C_ERR.createConflict, 'choice', { successSource: 'spec' }),
  getK8sCluster: r('GET', '/clusters/{id}', 200, C_ERR.get, 'choice', { successSource: 'spec' }),
  deleteK8sCluster: r('DELETE', '/clusters/{id}', 204, C_ERR.get, 'choice'),
  listK8sNodePools: r('GET', '/node-pools', 200, C_ERR.list, 'choice', { successSource: 'spec' }),
  createK8sNodePool: r('POST', '/node-pools', 201, C_ERR.createConflict, 'choice', { successSource: 'spec' }),
  getK8sNodePool: r('GET', '/node-pools/{poolId}', 200, C_ERR.get, 'choice', { successSource: 'spec' }),
  deleteK8sNodePool: r('DELETE', '/node-pools/{poolId}', 204, C_ERR.get, 'choice'),
  listSlurmClusters: r('GET', '/slurm/clusters', 200, C_ERR.list, 'choice', { successSource: 'spec' }),
  listSlurmNodePools: r('GET', '/slurm/node-pools', 200, C_ERR.listSlurmPools, 'choice', {
    successSource: 'spec',
  }),
  listCapacity: r('GET', '/capacity', 200, C_ERR.list, 'reference'),
};

export const ROUTES: Readonly<Record<Shape, RouteTable>> = { A, B, C };

/** Operations in a shape, in the order of OPERATIONS. */
export function operationsOf(shape: Shape): Operation[] {
  return OPERATIONS.filter((op) => ROUTES[shape][op] !== undefined);
}

const OVERRIDE = /^(GET|POST|PUT|PATCH|DELETE)\s+(\/\S*)(?:\s+(\d{3}))?$/;

/**
 * Applies deployment overrides: {"addSlurmUser": "POST /slurm/clusters/{id}/members 201"}.
 * The status is optional and keeps the table's when omitted. Unknown operations are an error,
 * so a typo never silently leaves the default route in place.
 */
export function withOverrides(table: RouteTable, overrides: Record<string, string>): RouteTable {
  const out: RouteTable = { ...table };
  for (const [name, spec] of Object.entries(overrides)) {
    if (!(OPERATIONS as readonly string[]).includes(name)) {
      throw new Error(`CLOUD_ROUTES: unknown operation "${name}"; known: ${OPERATIONS.join(', ')}`);
    }
    const m = OVERRIDE.exec(spec.trim());
    if (!m) throw new Error(`CLOUD_ROUTES: "${name}" must look like "POST /path/{id} 201"`);
    const op = name as Operation;
    const base = table[op];
    out[op] = {
      method: m[1] as HttpMethod,
      path: m[2]!,
      success: m[3] ? Number(m[3]) : (base?.success ?? 200),
      errors: base?.errors ?? [400, 403, 404, 409, 500, 501],
      projectHeader: base?.projectHeader ?? true,
      source: 'choice',
      successSource: 'choice',
    };
  }
  return out;
}
