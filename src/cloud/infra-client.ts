import { z } from 'zod';
import { ValidationError } from '../errors.js';
import { CloudUnsupportedError } from './cloud-errors.js';
import { createHttpClient, DEFAULT_TIMEOUT_MS, type HttpResponse } from './http-client.js';
import {
  addSlurmUserInput,
  createFilesystemInput,
  createK8sNodePoolInput,
  createProjectInput,
  createSlurmClusterInput,
  createSlurmNodePoolInput,
  REQUEST_SCHEMAS,
  registerK8sClusterInput,
  updateK8sClusterInput,
  updateSlurmUserInput,
  validateInput,
} from './input-schemas.js';
import { OPERATIONS, type Operation, ROUTES, type Route, type RouteTable } from './routes.js';
import { DEFAULT_IMAGE, UUID } from './rules.js';
import { parseResponse, RESPONSE_SCHEMAS } from './schemas.js';

// The typed client of the infrastructure API: one method per operation of routes.ts, in whichever
// shape is configured. Inputs are checked against the spec's rules before anything is sent; answers
// are validated; failures are the typed errors of cloud-errors.ts; retries follow retry.ts.

import type { CallOptions, IdInput, InfraClient, InfraClientOptions } from './infra-client-types.js';
import {
  checkRoutePlaceholders,
  decodeKubeconfig,
  NO_PROJECT_RULE,
  type ParamKind,
  PLACEHOLDER,
  placeholderNames,
} from './route-params.js';

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
      ...(opts?.onRetry ? { onRetry: opts.onRetry } : {}),
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
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
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
