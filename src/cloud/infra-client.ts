import type { Dispatcher } from 'undici';
import { z } from 'zod';
import { AppError, ErrorCode, ValidationError } from '../errors.js';
import { CloudSchemaError, CloudUnsupportedError } from './cloud-errors.js';
import { createHttpClient, type HttpCallEvent, type HttpResponse } from './http-client.js';
import {
  type AddSlurmUserInput,
  addSlurmUserInput,
  type CreateFilesystemInput,
  type CreateInstanceInput,
  type CreateK8sClusterInput,
  type CreateK8sNodePoolInput,
  type CreateProjectInput,
  type CreateSlurmClusterInput,
  type CreateSlurmNodePoolInput,
  createFilesystemInput,
  createK8sNodePoolInput,
  createProjectInput,
  createSlurmClusterInput,
  createSlurmNodePoolInput,
  REQUEST_SCHEMAS,
  type RegisterK8sClusterInput,
  registerK8sClusterInput,
  type UpdateK8sClusterInput,
  type UpdateSlurmUserInput,
  updateK8sClusterInput,
  updateSlurmUserInput,
  validateInput,
} from './input-schemas.js';
import type { RetryOptions } from './retry.js';
import { OPERATIONS, type Operation, ROUTES, type Route, type RouteTable, withOverrides } from './routes.js';
import { DEFAULT_IMAGE, UUID } from './rules.js';
import {
  type CapacityEntry,
  type Filesystem,
  type Instance,
  type KubernetesCluster,
  type KubernetesNodePool,
  type Project,
  parseResponse,
  RESPONSE_SCHEMAS,
  type SlurmCluster,
  type SlurmNodePool,
  type SlurmUser,
} from './schemas.js';
import type { Shape } from './shape.js';
import type { TokenProvider } from './token-provider.js';

// The typed client of the infrastructure API: one method per operation of routes.ts, in whichever
// shape is configured. Inputs are checked against the spec's rules before anything is sent; answers
// are validated; failures are the typed errors of cloud-errors.ts; retries follow retry.ts.

export interface InfraClientOptions {
  /** CLOUD_API_URL, e.g. https://region.example/api/v1alpha1. */
  readonly baseUrl: string;
  readonly shape: Shape;
  readonly tokens: TokenProvider;
  /** Default X-PROJECT-ID; a call's `projectId` wins. */
  readonly projectId?: string | undefined;
  /** Sent as X-ORG-ID in shape C. */
  readonly orgId?: string | undefined;
  /** The shape's route table, already merged with CLOUD_ROUTES (see resolveRoutes). */
  readonly routes?: RouteTable;
  readonly timeoutMs?: number;
  readonly dispatcher?: Dispatcher;
  readonly retry?: RetryOptions;
  /** Image sent when a create gives none; default image://ubuntu22.04 (the reference's default). */
  readonly defaultImage?: string;
  /** Called once per HTTP try (operation, status, latency), e.g. for /metrics. */
  readonly onCall?: (event: HttpCallEvent) => void;
}

export interface CallOptions {
  /** Project of this call (a channel's bound project); falls back to the client's default. */
  readonly projectId?: string | undefined;
  readonly signal?: AbortSignal | undefined;
}

export interface IdInput {
  readonly id: string;
}
export interface ClusterInput {
  readonly clusterId: string;
}
export interface PoolInput {
  /** Needed where the route nests pools under their cluster (A, B); shape C's routes are flat. */
  readonly clusterId?: string;
  readonly poolId: string;
}
export interface SlurmUserRef {
  readonly clusterId: string;
  readonly username: string;
}

export interface InfraClient {
  readonly shape: Shape;
  readonly routes: RouteTable;
  /** Whether the configured shape (with overrides) has the operation. */
  supports(operation: Operation): boolean;
  /** The operations available, in the order of OPERATIONS. */
  operations(): Operation[];

  createProject(input: CreateProjectInput, opts?: CallOptions): Promise<Project>;
  listProjects(opts?: CallOptions): Promise<Project[]>;
  getProject(input: IdInput, opts?: CallOptions): Promise<Project>;
  deleteProject(input: IdInput, opts?: CallOptions): Promise<void>;

  createInstance(input: CreateInstanceInput, opts?: CallOptions): Promise<Instance>;
  listInstances(opts?: CallOptions): Promise<Instance[]>;
  getInstance(input: IdInput, opts?: CallOptions): Promise<Instance>;
  deleteInstance(input: IdInput, opts?: CallOptions): Promise<void>;
  /** Shape C answers 200 with the instance; A and B answer 202 without a body (undefined). */
  startInstance(input: IdInput, opts?: CallOptions): Promise<Instance | undefined>;
  stopInstance(input: IdInput, opts?: CallOptions): Promise<Instance | undefined>;

  createFilesystem(input: CreateFilesystemInput, opts?: CallOptions): Promise<Filesystem>;
  listFilesystems(opts?: CallOptions): Promise<Filesystem[]>;
  getFilesystem(input: IdInput, opts?: CallOptions): Promise<Filesystem>;
  deleteFilesystem(input: IdInput, opts?: CallOptions): Promise<void>;

  listK8sClusters(opts?: CallOptions): Promise<KubernetesCluster[]>;
  createK8sCluster(input: CreateK8sClusterInput, opts?: CallOptions): Promise<KubernetesCluster>;
  registerK8sCluster(input: RegisterK8sClusterInput, opts?: CallOptions): Promise<KubernetesCluster>;
  getK8sCluster(input: IdInput, opts?: CallOptions): Promise<KubernetesCluster>;
  updateK8sCluster(input: IdInput & UpdateK8sClusterInput, opts?: CallOptions): Promise<KubernetesCluster>;
  deleteK8sCluster(input: IdInput, opts?: CallOptions): Promise<void>;
  /** In shape C `clusterId` is optional and becomes the `?cluster=` filter. */
  listK8sNodePools(
    input?: { readonly clusterId?: string },
    opts?: CallOptions,
  ): Promise<KubernetesNodePool[]>;
  /** Shape C's body names the cluster: `clusterName` is used, or looked up from `clusterId`. */
  createK8sNodePool(
    input: CreateK8sNodePoolInput & { readonly clusterId?: string; readonly clusterName?: string },
    opts?: CallOptions,
  ): Promise<KubernetesNodePool>;
  getK8sNodePool(input: PoolInput, opts?: CallOptions): Promise<KubernetesNodePool>;
  deleteK8sNodePool(input: PoolInput, opts?: CallOptions): Promise<void>;
  /** The kubeconfig YAML, decoded from the base64 the reference documents (raw YAML accepted too). */
  getKubeconfig(input: ClusterInput, opts?: CallOptions): Promise<string>;

  listSlurmClusters(opts?: CallOptions): Promise<SlurmCluster[]>;
  createSlurmCluster(input: CreateSlurmClusterInput, opts?: CallOptions): Promise<SlurmCluster>;
  getSlurmCluster(input: IdInput, opts?: CallOptions): Promise<SlurmCluster>;
  deleteSlurmCluster(input: IdInput, opts?: CallOptions): Promise<void>;
  /** Shape C lists every Slurm node pool of the project (its route takes no cluster). */
  listSlurmNodePools(input?: { readonly clusterId?: string }, opts?: CallOptions): Promise<SlurmNodePool[]>;
  createSlurmNodePool(
    input: ClusterInput & CreateSlurmNodePoolInput,
    opts?: CallOptions,
  ): Promise<SlurmNodePool>;
  getSlurmNodePool(input: PoolInput, opts?: CallOptions): Promise<SlurmNodePool>;
  deleteSlurmNodePool(input: PoolInput, opts?: CallOptions): Promise<void>;
  listSlurmUsers(input: ClusterInput, opts?: CallOptions): Promise<SlurmUser[]>;
  addSlurmUser(input: ClusterInput & AddSlurmUserInput, opts?: CallOptions): Promise<SlurmUser>;
  getSlurmUser(input: SlurmUserRef, opts?: CallOptions): Promise<SlurmUser>;
  updateSlurmUser(input: SlurmUserRef & UpdateSlurmUserInput, opts?: CallOptions): Promise<SlurmUser>;
  deleteSlurmUser(input: SlurmUserRef, opts?: CallOptions): Promise<void>;

  listCapacity(opts?: CallOptions): Promise<CapacityEntry[]>;

  close(): Promise<void>;
}

export const NO_PROJECT_RULE = 'no project: bind one with /gpu project use or set CLOUD_PROJECT_ID';

/**
 * Placeholders each operation's path may use. Several spellings name the same value so a route
 * override can follow the reference's style ({cluster_id}, {node_pool_id}) or ours ({clusterId}, {poolId});
 * {id} is the resource the operation addresses (the cluster for Slurm user routes, as shape A's table has it).
 */
const CLUSTER_NAMES = ['clusterId', 'cluster_id'] as const;
const POOL_NAMES = ['poolId', 'node_pool_id', 'nodePoolId'] as const;
type ParamKind = 'id' | 'cluster' | 'pool' | 'username';
const PARAMS: Record<Operation, readonly ParamKind[]> = {
  createProject: [],
  listProjects: [],
  getProject: ['id'],
  deleteProject: ['id'],
  createInstance: [],
  listInstances: [],
  getInstance: ['id'],
  deleteInstance: ['id'],
  startInstance: ['id'],
  stopInstance: ['id'],
  createFilesystem: [],
  listFilesystems: [],
  getFilesystem: ['id'],
  deleteFilesystem: ['id'],
  listK8sClusters: [],
  createK8sCluster: [],
  registerK8sCluster: [],
  getK8sCluster: ['id'],
  updateK8sCluster: ['id'],
  deleteK8sCluster: ['id'],
  listK8sNodePools: ['cluster'],
  createK8sNodePool: ['cluster'],
  getK8sNodePool: ['cluster', 'pool'],
  deleteK8sNodePool: ['cluster', 'pool'],
  getKubeconfig: ['cluster'],
  listSlurmClusters: [],
  createSlurmCluster: [],
  getSlurmCluster: ['id'],
  deleteSlurmCluster: ['id'],
  listSlurmNodePools: ['cluster'],
  createSlurmNodePool: ['cluster'],
  getSlurmNodePool: ['cluster', 'pool'],
  deleteSlurmNodePool: ['cluster', 'pool'],
  listSlurmUsers: ['cluster'],
  addSlurmUser: ['cluster'],
  getSlurmUser: ['cluster', 'username'],
  updateSlurmUser: ['cluster', 'username'],
  deleteSlurmUser: ['cluster', 'username'],
  listCapacity: [],
};

/** Placeholder name → which input value fills it, for one operation. */
function placeholderNames(op: Operation): Map<string, { kind: ParamKind; field: string }> {
  const kinds = PARAMS[op];
  const names = new Map<string, { kind: ParamKind; field: string }>();
  if (kinds.includes('id')) names.set('id', { kind: 'id', field: 'id' });
  if (kinds.includes('cluster'))
    for (const n of CLUSTER_NAMES) names.set(n, { kind: 'cluster', field: 'clusterId' });
  if (kinds.includes('pool')) for (const n of POOL_NAMES) names.set(n, { kind: 'pool', field: 'poolId' });
  if (kinds.includes('username')) names.set('username', { kind: 'username', field: 'username' });
  // {id} means the addressed resource: the pool for pool routes, else the cluster.
  if (!names.has('id') && kinds.includes('pool')) names.set('id', { kind: 'pool', field: 'poolId' });
  else if (!names.has('id') && kinds.includes('cluster'))
    names.set('id', { kind: 'cluster', field: 'clusterId' });
  return names;
}

const PLACEHOLDER = /\{([^}]+)\}/g;

/** Every placeholder of every route must be one the operation can fill; checked once at construction. */
export function checkRoutePlaceholders(routes: RouteTable): void {
  for (const op of OPERATIONS) {
    const route = routes[op];
    if (!route) continue;
    const allowed = placeholderNames(op);
    for (const m of route.path.matchAll(PLACEHOLDER)) {
      if (!allowed.has(m[1]!)) {
        const names = [...allowed.keys()].map((n) => `{${n}}`).join(', ') || 'none';
        throw new AppError(
          ErrorCode.Config,
          `CLOUD_ROUTES: the path of ${op} uses {${m[1]}}, which it cannot fill; placeholders it knows: ${names}.`,
        );
      }
    }
  }
}

/** The shape's route table with deployment overrides applied. */
export function resolveRoutes(shape: Shape, overrides: Readonly<Record<string, string>> = {}): RouteTable {
  try {
    return withOverrides(ROUTES[shape], overrides);
  } catch (err) {
    throw new AppError(ErrorCode.Config, (err as Error).message, { cause: err });
  }
}

const ROUTES_EXAMPLE = '{"addSlurmUser":"POST /slurm/clusters/{id}/users 201"}';

/**
 * Reads CLOUD_ROUTES: a JSON object of "operation": "METHOD /path [status]", or `@/path/file.json`.
 * Checked with routes.ts's withOverrides so a typo fails at start-up, not on the first call.
 */
export function parseRouteOverrides(
  value: string | undefined,
  readFile: (path: string) => string,
): Record<string, string> {
  const trimmed = value?.trim() ?? '';
  if (trimmed === '') return {};
  let text = trimmed;
  let source = 'CLOUD_ROUTES';
  if (trimmed.startsWith('@')) {
    const path = trimmed.slice(1);
    source = `CLOUD_ROUTES file ${path}`;
    try {
      text = readFile(path);
    } catch (err) {
      const code = (err as { code?: string }).code ?? (err as Error).message;
      throw new AppError(
        ErrorCode.Config,
        `CLOUD_ROUTES names the file ${path}, which could not be read (${code}).`,
        {
          cause: err,
        },
      );
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new AppError(
      ErrorCode.Config,
      `${source} is not valid JSON; expected an object such as ${ROUTES_EXAMPLE}.`,
    );
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new AppError(ErrorCode.Config, `${source} must be a JSON object such as ${ROUTES_EXAMPLE}.`);
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(parsed)) {
    if (typeof v !== 'string') {
      throw new AppError(
        ErrorCode.Config,
        `${source}: the route of ${k} must be a string like "POST /path/{id} 201".`,
      );
    }
    out[k] = v;
  }
  const merged = (() => {
    try {
      return withOverrides({}, out);
    } catch (err) {
      throw new AppError(ErrorCode.Config, (err as Error).message.replace(/^CLOUD_ROUTES/, source), {
        cause: err,
      });
    }
  })();
  checkRoutePlaceholders(merged);
  return out;
}

function looksLikeKubeconfig(text: string): boolean {
  return /(^|[\n{,])\s*["']?(apiVersion|clusters|contexts|current-context|kind)["']?\s*:/.test(text);
}

/** The reference sends the kubeconfig base64-encoded as application/yaml; plain YAML is accepted too. */
export function decodeKubeconfig(res: Pick<HttpResponse, 'text' | 'json'>, operation: string): string {
  let text = res.text;
  if (typeof res.json === 'string') text = res.json;
  else if (
    res.json &&
    typeof res.json === 'object' &&
    typeof (res.json as { kubeconfig?: unknown }).kubeconfig === 'string'
  ) {
    text = (res.json as { kubeconfig: string }).kubeconfig;
  }
  const compact = text.replace(/\s+/g, '');
  if (compact === '') throw new CloudSchemaError(operation, '', 'the kubeconfig is empty');
  if (compact.length % 4 === 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(compact)) {
    const decoded = Buffer.from(compact, 'base64').toString('utf8');
    if (looksLikeKubeconfig(decoded)) return decoded;
  }
  if (looksLikeKubeconfig(text)) return text;
  throw new CloudSchemaError(operation, '', 'the answer is neither a kubeconfig nor a base64-encoded one');
}

export function createInfraClient(options: InfraClientOptions): InfraClient {
  const { shape } = options;
  const routes: RouteTable = options.routes ?? ROUTES[shape];
  checkRoutePlaceholders(routes);
  const schemas = RESPONSE_SCHEMAS[shape];
  const defaultImage = options.defaultImage ?? DEFAULT_IMAGE;
  const http = createHttpClient({
    baseUrl: options.baseUrl,
    auth: { kind: 'bearer', tokens: options.tokens },
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    ...(options.retry ? { retry: options.retry } : {}),
    ...(options.onCall ? { onCall: options.onCall } : {}),
  });
  const lists = {
    project: z.array(schemas.project),
    instance: z.array(schemas.instance),
    filesystem: z.array(schemas.filesystem),
    k8sCluster: z.array(schemas.k8sCluster),
    k8sNodePool: z.array(schemas.k8sNodePool),
    slurmCluster: z.array(schemas.slurmCluster),
    slurmNodePool: z.array(schemas.slurmNodePool),
    slurmUser: z.array(schemas.slurmUser),
    capacityEntry: z.array(schemas.capacityEntry),
  };

  /** The route of an operation, or CloudUnsupportedError before anything else happens. */
  function routeOf(op: Operation): Route {
    const route = routes[op];
    if (!route) throw new CloudUnsupportedError(op, shape);
    return route;
  }

  interface Params {
    readonly id?: string | undefined;
    readonly clusterId?: string | undefined;
    readonly poolId?: string | undefined;
    readonly username?: string | undefined;
  }

  function fillPath(op: Operation, route: Route, params: Params): { path: string; used: Set<ParamKind> } {
    const names = placeholderNames(op);
    const used = new Set<ParamKind>();
    const path = route.path.replace(PLACEHOLDER, (_, name: string) => {
      const slot = names.get(name)!;
      const value = params[slot.field as keyof Params];
      if (typeof value !== 'string' || value === '') {
        throw new ValidationError(
          slot.field,
          'is required',
          `${slot.field} is required for ${op} in shape ${shape}.`,
        );
      }
      used.add(slot.kind);
      return encodeURIComponent(value);
    });
    return { path, used };
  }

  function headersFor(route: Route, opts: CallOptions | undefined): Record<string, string> {
    const headers: Record<string, string> = {};
    if (route.projectHeader) {
      const projectId = opts?.projectId ?? options.projectId;
      if (!projectId) {
        throw new ValidationError(
          'projectId',
          NO_PROJECT_RULE,
          'No project: bind one with /gpu project use or set CLOUD_PROJECT_ID.',
        );
      }
      if (!UUID.test(projectId)) {
        throw new ValidationError(
          'projectId',
          'a project id is a UUID',
          `projectId is not valid: a project id is a UUID.`,
        );
      }
      headers['x-project-id'] = projectId;
    }
    if (shape === 'C' && options.orgId) headers['x-org-id'] = options.orgId;
    return headers;
  }

  interface Call {
    readonly params?: Params;
    readonly body?: unknown;
    readonly query?: Record<string, string | undefined>;
    readonly accept?: string;
  }

  /** Validation is done by the caller; this fills the route, adds headers and sends. */
  async function send(op: Operation, call: Call, opts: CallOptions | undefined): Promise<HttpResponse> {
    const route = routeOf(op);
    const { path, used } = fillPath(op, route, call.params ?? {});
    const headers = headersFor(route, opts);
    let query = call.query;
    // Flat routes (shape C) filter node pools by a query parameter instead of a path segment.
    if (op === 'listK8sNodePools' && !used.has('cluster') && call.params?.clusterId) {
      query = { ...query, cluster: call.params.clusterId };
    }
    return http.send({
      operation: op,
      method: route.method,
      path,
      headers,
      ...(query ? { query } : {}),
      ...(call.body !== undefined ? { body: call.body } : {}),
      ...(call.accept ? { accept: call.accept } : {}),
      ...(opts?.signal ? { signal: opts.signal } : {}),
    });
  }

  async function invoke<T>(
    op: Operation,
    schema: z.ZodType<T>,
    call: Call,
    opts: CallOptions | undefined,
  ): Promise<T> {
    routeOf(op);
    const res = await send(op, call, opts);
    return parseResponse(schema, res.json, op);
  }

  async function remove(op: Operation, call: Call, opts: CallOptions | undefined): Promise<void> {
    routeOf(op);
    await send(op, call, opts);
  }

  /** Start/stop: 200 with a body (C) is the instance; 202/204 (A, B) carry nothing. */
  async function action(op: 'startInstance' | 'stopInstance', input: IdInput, opts?: CallOptions) {
    routeOf(op);
    const res = await send(op, { params: { id: input.id } }, opts);
    if (res.status !== 200 || res.json === undefined) return undefined;
    return parseResponse(schemas.instance, res.json, op);
  }

  const client: InfraClient = {
    shape,
    routes,
    supports: (op) => routes[op] !== undefined,
    operations: () => OPERATIONS.filter((op) => routes[op] !== undefined),

    async createProject(input, opts) {
      routeOf('createProject');
      const body = validateInput(createProjectInput, input);
      return invoke('createProject', schemas.project, { body }, opts);
    },
    listProjects: (opts) => invoke('listProjects', lists.project, {}, opts),
    getProject: (input, opts) => invoke('getProject', schemas.project, { params: { id: input.id } }, opts),
    deleteProject: (input, opts) => remove('deleteProject', { params: { id: input.id } }, opts),

    async createInstance(input, opts) {
      routeOf('createInstance');
      const valid = validateInput(REQUEST_SCHEMAS.createInstance[shape], input);
      const body = { ...valid, image: valid.image ?? defaultImage };
      return invoke('createInstance', schemas.instance, { body }, opts);
    },
    listInstances: (opts) => invoke('listInstances', lists.instance, {}, opts),
    getInstance: (input, opts) => invoke('getInstance', schemas.instance, { params: { id: input.id } }, opts),
    deleteInstance: (input, opts) => remove('deleteInstance', { params: { id: input.id } }, opts),
    startInstance: (input, opts) => action('startInstance', input, opts),
    stopInstance: (input, opts) => action('stopInstance', input, opts),

    async createFilesystem(input, opts) {
      routeOf('createFilesystem');
      const body = validateInput(createFilesystemInput, input);
      return invoke('createFilesystem', schemas.filesystem, { body }, opts);
    },
    listFilesystems: (opts) => invoke('listFilesystems', lists.filesystem, {}, opts),
    getFilesystem: (input, opts) =>
      invoke('getFilesystem', schemas.filesystem, { params: { id: input.id } }, opts),
    deleteFilesystem: (input, opts) => remove('deleteFilesystem', { params: { id: input.id } }, opts),

    listK8sClusters: (opts) => invoke('listK8sClusters', lists.k8sCluster, {}, opts),
    async createK8sCluster(input, opts) {
      routeOf('createK8sCluster');
      const body = validateInput(REQUEST_SCHEMAS.createK8sCluster[shape], input);
      return invoke('createK8sCluster', schemas.k8sCluster, { body }, opts);
    },
    async registerK8sCluster(input, opts) {
      routeOf('registerK8sCluster');
      const body = validateInput(registerK8sClusterInput, input);
      return invoke('registerK8sCluster', schemas.k8sCluster, { body }, opts);
    },
    getK8sCluster: (input, opts) =>
      invoke('getK8sCluster', schemas.k8sCluster, { params: { id: input.id } }, opts),
    async updateK8sCluster(input, opts) {
      routeOf('updateK8sCluster');
      const { id, ...rest } = input;
      const body = validateInput(updateK8sClusterInput, rest);
      if (body.version === undefined && body.labels === undefined) {
        throw new ValidationError(
          'version',
          'give a version or labels to change',
          'version or labels is required: give a version or labels to change.',
        );
      }
      return invoke('updateK8sCluster', schemas.k8sCluster, { params: { id }, body }, opts);
    },
    deleteK8sCluster: (input, opts) => remove('deleteK8sCluster', { params: { id: input.id } }, opts),
    listK8sNodePools: (input, opts) =>
      invoke('listK8sNodePools', lists.k8sNodePool, { params: { clusterId: input?.clusterId } }, opts),
    async createK8sNodePool(input, opts) {
      const route = routeOf('createK8sNodePool');
      const { clusterId, clusterName, ...rest } = input;
      const valid = validateInput(createK8sNodePoolInput, rest);
      const nested = /\{(clusterId|cluster_id|id)\}/.test(route.path);
      if (nested) {
        return invoke('createK8sNodePool', schemas.k8sNodePool, { params: { clusterId }, body: valid }, opts);
      }
      // Flat route (shape C): the body names the owning cluster by name.
      let cluster = clusterName;
      if (!cluster) {
        if (!clusterId) {
          throw new ValidationError(
            'clusterId',
            'is required',
            'clusterId (or clusterName) is required for createK8sNodePool.',
          );
        }
        cluster = (await client.getK8sCluster({ id: clusterId }, opts)).name;
      }
      return invoke('createK8sNodePool', schemas.k8sNodePool, { body: { ...valid, cluster } }, opts);
    },
    getK8sNodePool: (input, opts) =>
      invoke(
        'getK8sNodePool',
        schemas.k8sNodePool,
        { params: { clusterId: input.clusterId, poolId: input.poolId } },
        opts,
      ),
    deleteK8sNodePool: (input, opts) =>
      remove('deleteK8sNodePool', { params: { clusterId: input.clusterId, poolId: input.poolId } }, opts),
    async getKubeconfig(input, opts) {
      routeOf('getKubeconfig');
      const res = await send(
        'getKubeconfig',
        {
          params: { clusterId: input.clusterId },
          accept: 'application/yaml, application/json;q=0.9, */*;q=0.5',
        },
        opts,
      );
      return decodeKubeconfig(res, 'getKubeconfig');
    },

    listSlurmClusters: (opts) => invoke('listSlurmClusters', lists.slurmCluster, {}, opts),
    async createSlurmCluster(input, opts) {
      routeOf('createSlurmCluster');
      const body = validateInput(createSlurmClusterInput, input);
      return invoke('createSlurmCluster', schemas.slurmCluster, { body }, opts);
    },
    getSlurmCluster: (input, opts) =>
      invoke('getSlurmCluster', schemas.slurmCluster, { params: { id: input.id } }, opts),
    deleteSlurmCluster: (input, opts) => remove('deleteSlurmCluster', { params: { id: input.id } }, opts),
    listSlurmNodePools: (input, opts) =>
      invoke('listSlurmNodePools', lists.slurmNodePool, { params: { clusterId: input?.clusterId } }, opts),
    async createSlurmNodePool(input, opts) {
      routeOf('createSlurmNodePool');
      const { clusterId, ...rest } = input;
      const body = validateInput(createSlurmNodePoolInput, rest);
      return invoke('createSlurmNodePool', schemas.slurmNodePool, { params: { clusterId }, body }, opts);
    },
    getSlurmNodePool: (input, opts) =>
      invoke(
        'getSlurmNodePool',
        schemas.slurmNodePool,
        { params: { clusterId: input.clusterId, poolId: input.poolId } },
        opts,
      ),
    deleteSlurmNodePool: (input, opts) =>
      remove('deleteSlurmNodePool', { params: { clusterId: input.clusterId, poolId: input.poolId } }, opts),
    listSlurmUsers: (input, opts) =>
      invoke('listSlurmUsers', lists.slurmUser, { params: { clusterId: input.clusterId } }, opts),
    async addSlurmUser(input, opts) {
      routeOf('addSlurmUser');
      const { clusterId, ...rest } = input;
      const valid = validateInput(addSlurmUserInput, rest);
      // The spec's default, sent explicitly so the answer never depends on the server's.
      const body = { ...valid, sudo: valid.sudo ?? false };
      return invoke('addSlurmUser', schemas.slurmUser, { params: { clusterId }, body }, opts);
    },
    getSlurmUser: (input, opts) =>
      invoke(
        'getSlurmUser',
        schemas.slurmUser,
        { params: { clusterId: input.clusterId, username: input.username } },
        opts,
      ),
    async updateSlurmUser(input, opts) {
      routeOf('updateSlurmUser');
      const { clusterId, username, ...rest } = input;
      // sudo omitted keeps the current value (spec), so it is not defaulted here.
      const body = validateInput(updateSlurmUserInput, rest);
      return invoke('updateSlurmUser', schemas.slurmUser, { params: { clusterId, username }, body }, opts);
    },
    deleteSlurmUser: (input, opts) =>
      remove('deleteSlurmUser', { params: { clusterId: input.clusterId, username: input.username } }, opts),

    listCapacity: (opts) => invoke('listCapacity', lists.capacityEntry, {}, opts),

    close: () => http.close(),
  };
  return client;
}
