import type { Operation } from '../../cloud/routes.js';
import { checkCidr, checkK8sVersion, DEFAULT_POD_CIDR, DEFAULT_SERVICE_CIDR } from '../../cloud/rules.js';
import {
  asFields,
  check,
  type Fields,
  invalid,
  optionalBoolean,
  optionalString,
  optionalStringMap,
  requiredString,
} from '../read-fields.js';
import { k8sClusterView, k8sPoolView, kubeconfigYaml } from '../resource-views.js';
import { SimError } from '../sim-error.js';
import { DEFAULT_K8S_VERSION, type PoolInput } from '../sim-state.js';
import { clusterOf, EMPTY, type Handler, json, LABEL_RULE, param, projectOf, readPool } from './kit.js';

// Kubernetes clusters, their node pools and kubeconfigs.

export const k8sRoutes = {
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
} satisfies Partial<Record<Operation, Handler>>;
