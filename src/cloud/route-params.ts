import { AppError, ErrorCode } from '../errors.js';
import { CloudSchemaError } from './cloud-errors.js';
import type { HttpResponse } from './http-client.js';
import { OPERATIONS, type Operation, ROUTES, type RouteTable, withOverrides } from './routes.js';
import type { Shape } from './shape.js';

// How a route's path placeholders are filled from an operation's input, how CLOUD_ROUTES overrides
// routes, and how a kubeconfig answer is read.

export const NO_PROJECT_RULE = 'no project: bind one with /gpu project use or set CLOUD_PROJECT_ID';

/**
 * Placeholders each operation's path may use. Several spellings name the same value so a route
 * override can follow the reference's style ({cluster_id}, {node_pool_id}) or ours ({clusterId}, {poolId});
 * {id} is the resource the operation addresses (the cluster for Slurm user routes, as shape A's table has it).
 */
export const CLUSTER_NAMES = ['clusterId', 'cluster_id'] as const;
export const POOL_NAMES = ['poolId', 'node_pool_id', 'nodePoolId'] as const;
export type ParamKind = 'id' | 'cluster' | 'pool' | 'username';
export const PARAMS: Record<Operation, readonly ParamKind[]> = {
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
export function placeholderNames(op: Operation): Map<string, { kind: ParamKind; field: string }> {
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

export const PLACEHOLDER = /\{([^}]+)\}/g;

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
