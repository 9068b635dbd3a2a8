import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Operation, ROUTES } from '../cloud/routes.js';
import {
  checkBase64,
  checkCidr,
  checkImageRef,
  checkK8sVersion,
  checkSize,
  checkSshPublicKey,
  checkTagKey,
  checkUsername,
  DEFAULT_IMAGE,
  DEFAULT_POD_CIDR,
  DEFAULT_SERVICE_CIDR,
  IMAGE_PREFIX,
  UUID,
} from '../cloud/rules.js';
import type { Shape } from '../cloud/shape.js';
import { checkAuthorization } from './bearer-auth.js';
import { BodyTooLarge, parseJsonBody, readBodyIf, sendJson, sendMessage, sendText } from './http-io.js';
import {
  asFields,
  check,
  type Fields,
  invalid,
  optionalBoolean,
  optionalString,
  optionalStringArray,
  optionalStringMap,
  requiredInteger,
  requiredString,
  requiredStringArray,
} from './read-fields.js';
import {
  filesystemView,
  instanceView,
  k8sClusterView,
  k8sPoolView,
  kubeconfigYaml,
  projectView,
  slurmClusterView,
  slurmPoolView,
  slurmUserView,
} from './resource-views.js';
import { createRouteMatcher } from './route-matcher.js';
import { SimError, statusFor } from './sim-error.js';
import type { SimRuntime } from './sim-runtime.js';
import {
  type ClusterKind,
  DEFAULT_K8S_VERSION,
  DEFAULT_SLURM_VERSION,
  type PoolInput,
  type SimClusters,
  type SimProject,
  type SimState,
} from './sim-state.js';

// The infrastructure API (/api/v1alpha1) in the shape the simulator was started with. Routes come from
// src/cloud/routes.ts; a request is matched, counted (creates), faulted, authenticated, scoped to its
// project, then handled. Errors use the statuses the operation lists, with a `{ message }` body.

interface Call {
  readonly shape: Shape;
  readonly state: SimState;
  readonly project: SimProject | undefined;
  readonly params: Readonly<Record<string, string>>;
  readonly body: unknown;
  readonly query: URLSearchParams;
}

type Reply =
  | { readonly json: unknown }
  | { readonly empty: true }
  | { readonly text: string; readonly contentType: string; readonly headers: Record<string, string> };

type Handler = (call: Call) => Reply;

/** The operations that create something, and the body field that names what they create. */
export const CREATE_OPERATIONS: Partial<Record<Operation, string>> = {
  createProject: 'name',
  createInstance: 'name',
  createFilesystem: 'name',
  createK8sCluster: 'name',
  registerK8sCluster: 'name',
  createK8sNodePool: 'name',
  createSlurmCluster: 'name',
  createSlurmNodePool: 'name',
  addSlurmUser: 'username',
};

/** The name a create request asks for, for the create counts; readable even when the body is not. */
export function createdName(body: unknown, field: string): string {
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const v = (body as Fields)[field];
    if (typeof v === 'string') return v;
  }
  return '(no name)';
}

const LABEL_RULE = (key: string): string | null =>
  key.length >= 1 && key.length <= 253 && !/\s/.test(key)
    ? null
    : 'a label key has 1 to 253 characters and no spaces';

const json = (value: unknown): Reply => ({ json: value });
const EMPTY: Reply = { empty: true };

function projectOf(call: Call): SimProject {
  // Every route with projectHeader gets one resolved before its handler runs.
  if (!call.project) throw new Error(`route without a resolved project`);
  return call.project;
}

function param(call: Call, name: string): string {
  const v = call.params[name];
  if (v === undefined) throw new Error(`route template lacks {${name}}`);
  return v;
}

function readTags(o: Fields): Record<string, string> {
  return optionalStringMap(o, 'tags', checkTagKey) ?? {};
}

function readPool(o: Fields, withVersion: boolean): PoolInput {
  const name = requiredString(o, 'name');
  const type = requiredString(o, 'type', 'an instance type such as h100-hgx-80gb.8x');
  const count = requiredInteger(o, 'count', 1, 1000);
  const version = withVersion ? optionalString(o, 'version') : undefined;
  return { name, type, count, ...(version !== undefined ? { version } : {}) };
}

function readSshKeys(o: Fields): string[] {
  const keys = requiredStringArray(o, 'sshKeys', 'OpenSSH public keys');
  if (keys.length === 0) throw invalid('sshKeys', 'needs at least one OpenSSH public key');
  keys.forEach((key, i) => {
    const broken = checkSshPublicKey(key);
    if (broken) throw invalid(`sshKeys[${i}]`, broken);
  });
  return keys;
}

/** The cluster of `kind` that the path parameter `name` names, in the call's project. */
function clusterOf<K extends ClusterKind>(call: Call, kind: K, name = 'id'): SimClusters[K] {
  return call.state.getCluster(projectOf(call), kind, param(call, name));
}

const HANDLERS: Record<Operation, Handler> = {
  createProject: (call) => {
    const o = asFields(call.body);
    const name = requiredString(o, 'name');
    return json(projectView(call.state.createProject(name, readTags(o))));
  },
  listProjects: (call) => json(call.state.listProjects().map(projectView)),
  getProject: (call) => json(projectView(call.state.getProject(param(call, 'id')))),
  deleteProject: (call) => {
    call.state.deleteProject(param(call, 'id'));
    return EMPTY;
  },

  createInstance: (call) => {
    const o = asFields(call.body);
    const name = requiredString(o, 'name');
    const type = requiredString(o, 'type', 'an instance type such as h100-hgx-80gb.8x');
    const image =
      optionalString(o, 'image', 'an image reference such as image://ubuntu22.04') ?? DEFAULT_IMAGE;
    check('image', image, checkImageRef);
    const userData = optionalString(o, 'userData', 'base64 text') ?? null;
    if (userData !== null) check('userData', userData, checkBase64);
    let filesystems: string[] = [];
    if (call.shape !== 'A') {
      filesystems = optionalStringArray(o, 'filesystems', 'filesystem UUIDs') ?? [];
      filesystems.forEach((id, i) => {
        if (!UUID.test(id))
          throw invalid(`filesystems[${i}]`, `must be a filesystem UUID; got "${id.slice(0, 40)}"`);
      });
    }
    const inst = call.state.createInstance(projectOf(call), {
      name,
      type,
      image: image.slice(IMAGE_PREFIX.length),
      preemptible: optionalBoolean(o, 'preemptible') ?? false,
      ephemeral: optionalBoolean(o, 'ephemeral') ?? false,
      userData,
      filesystems,
      tags: readTags(o),
    });
    return json(instanceView(inst, call.shape));
  },
  listInstances: (call) => {
    const out: unknown[] = [];
    for (const inst of projectOf(call).instances.values()) out.push(instanceView(inst, call.shape));
    return json(out);
  },
  getInstance: (call) =>
    json(instanceView(call.state.getInstance(projectOf(call), param(call, 'id')), call.shape)),
  deleteInstance: (call) => {
    call.state.deleteInstance(projectOf(call), param(call, 'id'));
    return EMPTY;
  },
  // B answers 202 and C 200; both get the instance in its new state (B's document shows no body, so
  // clients ignore it there).
  startInstance: (call) =>
    json(instanceView(call.state.startInstance(projectOf(call), param(call, 'id')), call.shape)),
  stopInstance: (call) =>
    json(instanceView(call.state.stopInstance(projectOf(call), param(call, 'id')), call.shape)),

  createFilesystem: (call) => {
    const o = asFields(call.body);
    const name = requiredString(o, 'name');
    const size = requiredString(o, 'size', 'a size with a unit such as 512Gi');
    check('size', size, checkSize);
    return json(filesystemView(call.state.createFilesystem(projectOf(call), name, size)));
  },
  listFilesystems: (call) => json([...projectOf(call).filesystems.values()].map(filesystemView)),
  getFilesystem: (call) => json(filesystemView(call.state.getFilesystem(projectOf(call), param(call, 'id')))),
  deleteFilesystem: (call) => {
    call.state.deleteFilesystem(projectOf(call), param(call, 'id'));
    return EMPTY;
  },

  listK8sClusters: (call) =>
    json([...projectOf(call).k8s.values()].map((c) => k8sClusterView(c, call.shape))),
  createK8sCluster: (call) => {
    const o = asFields(call.body);
    const name = requiredString(o, 'name');
    const version =
      call.shape === 'A'
        ? requiredString(o, 'version', 'a Kubernetes version such as v1.31.2')
        : (optionalString(o, 'version') ?? DEFAULT_K8S_VERSION);
    let podCIDRBlock = DEFAULT_POD_CIDR;
    let serviceCIDRBlock = DEFAULT_SERVICE_CIDR;
    let defaultNodePool: PoolInput | undefined;
    if (call.shape === 'A') {
      podCIDRBlock = optionalString(o, 'podCIDRBlock') ?? DEFAULT_POD_CIDR;
      check('podCIDRBlock', podCIDRBlock, checkCidr);
      serviceCIDRBlock = optionalString(o, 'serviceCIDRBlock') ?? DEFAULT_SERVICE_CIDR;
      check('serviceCIDRBlock', serviceCIDRBlock, checkCidr);
      const pool = o.defaultNodePool;
      if (pool !== undefined && pool !== null) {
        if (typeof pool !== 'object' || Array.isArray(pool)) {
          throw invalid('defaultNodePool', 'must be an object {create, name, type, count}');
        }
        const p = pool as Fields;
        if (optionalBoolean(p, 'create') === true) {
          const named = { ...p, name: p.name ?? 'default' };
          try {
            defaultNodePool = readPool(named, false);
          } catch (err) {
            if (err instanceof SimError) {
              throw new SimError(err.kind, `defaultNodePool.${err.message}`, `defaultNodePool.${err.field}`);
            }
            throw err;
          }
        }
      }
    }
    const cluster = call.state.createK8sCluster(projectOf(call), {
      name,
      version,
      podCIDRBlock,
      serviceCIDRBlock,
      ...(defaultNodePool ? { defaultNodePool } : {}),
    });
    return json(k8sClusterView(cluster, call.shape));
  },
  registerK8sCluster: (call) => {
    const o = asFields(call.body);
    const name = requiredString(o, 'name');
    requiredString(o, 'kubeconfig', 'the kubeconfig of the cluster to register, as text');
    const labels = optionalStringMap(o, 'labels', LABEL_RULE) ?? {};
    const version = optionalString(o, 'version') ?? DEFAULT_K8S_VERSION;
    const cluster = call.state.createK8sCluster(projectOf(call), {
      name,
      version,
      podCIDRBlock: DEFAULT_POD_CIDR,
      serviceCIDRBlock: DEFAULT_SERVICE_CIDR,
      labels,
      registered: true,
    });
    return json(k8sClusterView(cluster, call.shape));
  },
  getK8sCluster: (call) => json(k8sClusterView(clusterOf(call, 'k8s'), call.shape)),
  updateK8sCluster: (call) => {
    const o = asFields(call.body ?? {});
    const cluster = clusterOf(call, 'k8s');
    const version = optionalString(o, 'version', 'a version such as v1.31.2');
    if (version !== undefined) check('version', version, checkK8sVersion);
    const labels = optionalStringMap(o, 'labels', LABEL_RULE);
    if (version !== undefined) cluster.version = version;
    if (labels) cluster.labels = { ...cluster.labels, ...labels };
    return json(k8sClusterView(cluster, call.shape));
  },
  deleteK8sCluster: (call) => {
    call.state.deleteCluster(projectOf(call), 'k8s', param(call, 'id'));
    return EMPTY;
  },

  listK8sNodePools: (call) => {
    const project = projectOf(call);
    if (call.shape === 'C') {
      const filter = call.query.get('cluster');
      const out: unknown[] = [];
      for (const cluster of project.k8s.values()) {
        if (filter && cluster.id !== filter.toLowerCase() && cluster.name !== filter) continue;
        for (const pool of cluster.pools.values()) out.push(k8sPoolView(pool, cluster, call.shape));
      }
      return json(out);
    }
    const cluster = clusterOf(call, 'k8s', 'clusterId');
    return json([...cluster.pools.values()].map((p) => k8sPoolView(p, cluster, call.shape)));
  },
  createK8sNodePool: (call) => {
    const project = projectOf(call);
    const o = asFields(call.body);
    const cluster =
      call.shape === 'C'
        ? call.state.k8sClusterByName(
            project,
            requiredString(o, 'cluster', 'the name of a cluster'),
            'cluster',
          )
        : clusterOf(call, 'k8s', 'clusterId');
    const pool = call.state.createK8sPool(cluster, readPool(o, true));
    return json(k8sPoolView(pool, cluster, call.shape));
  },
  getK8sNodePool: (call) => {
    const project = projectOf(call);
    if (call.shape === 'C') {
      const { cluster, pool } = call.state.findK8sPool(project, param(call, 'poolId'));
      return json(k8sPoolView(pool, cluster, call.shape));
    }
    const cluster = clusterOf(call, 'k8s', 'clusterId');
    return json(k8sPoolView(call.state.getPool(cluster, param(call, 'poolId')), cluster, call.shape));
  },
  deleteK8sNodePool: (call) => {
    const project = projectOf(call);
    const cluster =
      call.shape === 'C'
        ? call.state.findK8sPool(project, param(call, 'poolId')).cluster
        : clusterOf(call, 'k8s', 'clusterId');
    call.state.deletePool(cluster, param(call, 'poolId'));
    return EMPTY;
  },
  getKubeconfig: (call) => {
    const cluster = clusterOf(call, 'k8s', 'clusterId');
    return {
      text: Buffer.from(kubeconfigYaml(cluster)).toString('base64'),
      contentType: 'application/yaml',
      headers: {
        'cache-control': 'no-store, no-cache, must-revalidate',
        'content-disposition': 'attachment; filename=kubeconfig',
      },
    };
  },

  listSlurmClusters: (call) =>
    json([...projectOf(call).slurm.values()].map((c) => slurmClusterView(c, call.shape))),
  createSlurmCluster: (call) => {
    const o = asFields(call.body);
    const name = requiredString(o, 'name');
    const version = optionalString(o, 'version') ?? DEFAULT_SLURM_VERSION;
    return json(slurmClusterView(call.state.createSlurmCluster(projectOf(call), name, version), call.shape));
  },
  getSlurmCluster: (call) => json(slurmClusterView(clusterOf(call, 'slurm'), call.shape)),
  deleteSlurmCluster: (call) => {
    call.state.deleteCluster(projectOf(call), 'slurm', param(call, 'id'));
    return EMPTY;
  },
  listSlurmNodePools: (call) => {
    if (call.shape === 'C') {
      const out: unknown[] = [];
      for (const cluster of projectOf(call).slurm.values()) {
        for (const pool of cluster.pools.values()) out.push(slurmPoolView(pool, call.shape));
      }
      return json(out);
    }
    return json(
      [...clusterOf(call, 'slurm', 'clusterId').pools.values()].map((p) => slurmPoolView(p, call.shape)),
    );
  },
  createSlurmNodePool: (call) => {
    const cluster = clusterOf(call, 'slurm', 'clusterId');
    const pool = call.state.createSlurmPool(cluster, readPool(asFields(call.body), false));
    return json(slurmPoolView(pool, call.shape));
  },
  getSlurmNodePool: (call) =>
    json(
      slurmPoolView(
        call.state.getPool(clusterOf(call, 'slurm', 'clusterId'), param(call, 'poolId')),
        call.shape,
      ),
    ),
  deleteSlurmNodePool: (call) => {
    call.state.deletePool(clusterOf(call, 'slurm', 'clusterId'), param(call, 'poolId'));
    return EMPTY;
  },

  listSlurmUsers: (call) => json([...clusterOf(call, 'slurm').users.values()].map(slurmUserView)),
  addSlurmUser: (call) => {
    const cluster = clusterOf(call, 'slurm');
    const o = asFields(call.body);
    const username = requiredString(o, 'username', 'a POSIX user name such as alice');
    check('username', username, checkUsername);
    const sshKeys = readSshKeys(o);
    const sudo = optionalBoolean(o, 'sudo') ?? false;
    return json(slurmUserView(call.state.addSlurmUser(cluster, { username, sshKeys, sudo })));
  },
  getSlurmUser: (call) =>
    json(slurmUserView(call.state.getSlurmUser(clusterOf(call, 'slurm'), param(call, 'username')))),
  updateSlurmUser: (call) => {
    const cluster = clusterOf(call, 'slurm');
    const username = param(call, 'username');
    call.state.getSlurmUser(cluster, username);
    const o = asFields(call.body);
    const sshKeys = readSshKeys(o);
    const sudo = optionalBoolean(o, 'sudo');
    return json(slurmUserView(call.state.updateSlurmUser(cluster, username, sshKeys, sudo)));
  },
  deleteSlurmUser: (call) => {
    call.state.deleteSlurmUser(clusterOf(call, 'slurm'), param(call, 'username'));
    return EMPTY;
  },

  listCapacity: (call) => json(call.state.remainingCapacity()),
};

export interface InfraApi {
  handle(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): Promise<void>;
}

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

export function createInfraApi(rt: SimRuntime): InfraApi {
  const matcher = createRouteMatcher(ROUTES[rt.shape]);
  const rule = {
    staticToken: rt.credentials.cloudToken,
    jwtSecret: rt.credentials.jwtSecret,
    audience: rt.cloudAudience,
    now: rt.clock.now,
  };

  return {
    async handle(req, res, path, query) {
      const method = req.method ?? 'GET';
      const match = matcher.match(method, path);
      if (!match) {
        req.resume();
        sendMessage(
          res,
          404,
          `No operation ${method} ${path} in shape ${rt.shape} of the infrastructure API; see docs/cloud-api.md for its routes.`,
        );
        return;
      }
      const { operation, route, params } = match;
      const fail = (err: SimError) => sendMessage(res, statusFor(err.kind, route.errors), err.message);

      let raw = '';
      try {
        raw = await readBodyIf(req, METHODS_WITH_BODY.has(method));
      } catch (err) {
        if (err instanceof BodyTooLarge)
          sendMessage(res, 413, `The request body is too large: ${err.message}.`);
        else res.destroy();
        return;
      }
      let body: unknown;
      let bodyError: SimError | undefined;
      try {
        body = parseJsonBody(raw);
      } catch (err) {
        if (!(err instanceof SimError)) throw err;
        bodyError = err;
      }
      const nameField = CREATE_OPERATIONS[operation];
      const name = nameField ? createdName(body, nameField) : '';
      if (nameField) rt.state.countCreateAttempt(operation, name);

      if (await rt.gate.apply(operation, true, res)) return;

      const authProblem = checkAuthorization(req.headers.authorization, rule);
      if (authProblem) {
        sendMessage(res, 401, `Unauthorized: ${authProblem}.`, { 'www-authenticate': 'Bearer' });
        return;
      }

      let project: SimProject | undefined;
      if (route.projectHeader) {
        try {
          const header = req.headers['x-project-id'];
          project = rt.state.resolveProject(Array.isArray(header) ? header[0] : header);
        } catch (err) {
          if (err instanceof SimError) return fail(err);
          throw err;
        }
      }

      if (nameField) rt.state.countCreate(operation, name);
      try {
        if (bodyError) throw bodyError;
        const reply = HANDLERS[operation]({ shape: rt.shape, state: rt.state, project, params, body, query });
        if ('json' in reply) sendJson(res, route.success, route.success === 204 ? undefined : reply.json);
        else if ('text' in reply) sendText(res, route.success, reply.contentType, reply.text, reply.headers);
        else sendJson(res, route.success, undefined);
      } catch (err) {
        if (err instanceof SimError) return fail(err);
        throw err;
      }
    },
  };
}
