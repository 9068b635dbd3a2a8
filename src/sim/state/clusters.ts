import { randomBytes } from 'node:crypto';
import { SIM_INSTANCE_TYPES, type SimInstanceType } from '../catalog.js';
import { SimError, SimErrorKind } from '../sim-error.js';
import { SimInstances } from './instances.js';
import {
  CLUSTER_NOUN,
  type ClusterKind,
  DEFAULT_SLURM_VERSION,
  fakeCertificate,
  found,
  type PoolInput,
  type SimClusters,
  type SimK8sCluster,
  type SimK8sPool,
  type SimNode,
  type SimPool,
  type SimPoolCluster,
  type SimProject,
  type SimSlurmCluster,
  type SimSlurmPool,
  type SimSlurmUser,
} from './types.js';

// Kubernetes and Slurm clusters, their node pools and nodes, and Slurm users.

export class SimClusterState extends SimInstances {
  protected override seedProject(project: SimProject): void {
    const cluster = this.newSlurmCluster('slurm-1', DEFAULT_SLURM_VERSION);
    project.slurm.set(cluster.id, cluster);
    const type = SIM_INSTANCE_TYPES.find((t) => t.name === 'h100-hgx-80gb.8x') ?? SIM_INSTANCE_TYPES[0]!;
    const pool = this.newPool(cluster, { name: 'gpu', type: type.name, count: 2 }, type, false);
    cluster.pools.set(pool.id, pool);
  }

  // --- nodes -------------------------------------------------------------------------------------------

  protected newNodes(prefix: string, count: number): SimNode[] {
    const createdAt = this.clock.now();
    return Array.from({ length: count }, (_, i) => ({
      name: `${prefix}-${String(i + 1).padStart(2, '0')}`,
      instanceID: this.random.uuid(),
      createdAt,
      publicIP: this.nextPublicIp(),
      privateIP: this.nextPrivateIp(),
    }));
  }

  // --- clusters and pools of either kind ---------------------------------------------------------------

  protected clustersOf<K extends ClusterKind>(project: SimProject, kind: K): Map<string, SimClusters[K]> {
    return project[kind] as Map<string, SimClusters[K]>;
  }

  protected ensureUniqueCluster(project: SimProject, kind: ClusterKind, name: string): void {
    for (const c of this.clustersOf(project, kind).values()) {
      if (c.name === name) {
        throw new SimError(
          SimErrorKind.Conflict,
          `name: a ${CLUSTER_NOUN[kind]} named "${name}" already exists in project ${project.id}; choose another name.`,
          'name',
        );
      }
    }
  }

  getCluster<K extends ClusterKind>(project: SimProject, kind: K, id: string): SimClusters[K] {
    return found(this.clustersOf(project, kind), id, CLUSTER_NOUN[kind], `project ${project.id}`);
  }

  deleteCluster(project: SimProject, kind: ClusterKind, id: string): void {
    const c = this.getCluster(project, kind, id);
    this.releasePools(c.pools.values());
    this.clustersOf(project, kind).delete(c.id);
  }

  protected newPool(
    cluster: { readonly id: string; readonly name: string },
    input: PoolInput,
    type: SimInstanceType,
    holds: boolean,
  ): SimPool {
    return {
      id: this.random.uuid(),
      name: input.name,
      clusterId: cluster.id,
      type,
      count: input.count,
      nodes: this.newNodes(`${cluster.name}-${input.name}`, input.count),
      holdsCapacity: holds,
    };
  }

  /** Checks the type, the name within the cluster and the capacity, then adds what `build` makes. */
  protected addPool<P extends SimPool>(
    cluster: SimPoolCluster<P>,
    input: PoolInput,
    build: (type: SimInstanceType) => P,
  ): P {
    const type = this.instanceType(input.type);
    for (const p of cluster.pools.values()) {
      if (p.name === input.name) {
        throw new SimError(
          SimErrorKind.Conflict,
          `name: cluster ${cluster.name} already has a node pool named "${input.name}"; choose another name.`,
          'name',
        );
      }
    }
    this.take(type, input.count, 'count');
    const pool = build(type);
    cluster.pools.set(pool.id, pool);
    return pool;
  }

  getPool<P extends SimPool>(cluster: SimPoolCluster<P>, id: string): P {
    return found(cluster.pools, id, 'Node pool', `cluster ${cluster.name}`);
  }

  deletePool<P extends SimPool>(cluster: SimPoolCluster<P>, id: string): void {
    const pool = this.getPool(cluster, id);
    this.releasePools([pool]);
    cluster.pools.delete(pool.id);
  }

  // --- Kubernetes --------------------------------------------------------------------------------------

  createK8sCluster(
    project: SimProject,
    input: {
      name: string;
      version: string;
      podCIDRBlock: string;
      serviceCIDRBlock: string;
      labels?: Record<string, string>;
      defaultNodePool?: PoolInput;
      registered?: boolean;
    },
  ): SimK8sCluster {
    this.ensureUniqueCluster(project, 'k8s', input.name);
    const poolType = input.defaultNodePool
      ? this.instanceType(input.defaultNodePool.type, 'defaultNodePool.type')
      : undefined;
    if (input.defaultNodePool && poolType)
      this.take(poolType, input.defaultNodePool.count, 'defaultNodePool.count');
    const cluster: SimK8sCluster = {
      id: this.random.uuid(),
      name: input.name,
      version: input.version,
      certificateAuthorityData: fakeCertificate(),
      status: input.registered ? 'READY' : 'PROVISIONING',
      labels: { ...(input.labels ?? {}) },
      registered: input.registered ?? false,
      podCIDRBlock: input.podCIDRBlock,
      serviceCIDRBlock: input.serviceCIDRBlock,
      createdAt: this.clock.now(),
      pools: new Map(),
      adminToken: randomBytes(24).toString('base64url'),
    };
    project.k8s.set(cluster.id, cluster);
    if (input.defaultNodePool && poolType) {
      const pool = this.newK8sPool(cluster, input.defaultNodePool, poolType, true);
      cluster.pools.set(pool.id, pool);
    }
    if (cluster.status === 'PROVISIONING') {
      this.clock.at(this.clock.now() + this.transitionMs, () => {
        cluster.status = 'READY';
      });
    }
    return cluster;
  }

  k8sClusterByName(project: SimProject, name: string, field: string): SimK8sCluster {
    for (const c of project.k8s.values()) if (c.name === name) return c;
    throw new SimError(
      SimErrorKind.BadReference,
      `${field}: no Kubernetes cluster named "${name.slice(0, 60)}" in project ${project.id}.`,
      field,
    );
  }

  protected newK8sPool(
    cluster: SimK8sCluster,
    input: PoolInput,
    type: SimInstanceType,
    holds: boolean,
  ): SimK8sPool {
    return { ...this.newPool(cluster, input, type, holds), version: input.version ?? cluster.version };
  }

  createK8sPool(cluster: SimK8sCluster, input: PoolInput): SimK8sPool {
    return this.addPool(cluster, input, (type) => this.newK8sPool(cluster, input, type, true));
  }

  /** Shape C addresses pools without their cluster. */
  findK8sPool(project: SimProject, id: string): { cluster: SimK8sCluster; pool: SimK8sPool } {
    const key = id.toLowerCase();
    for (const cluster of project.k8s.values()) {
      const pool = cluster.pools.get(key);
      if (pool) return { cluster, pool };
    }
    throw new SimError(
      SimErrorKind.NotFound,
      `Node pool ${id.slice(0, 40)} was not found in project ${project.id}.`,
    );
  }

  // --- Slurm -------------------------------------------------------------------------------------------

  protected newSlurmCluster(name: string, version: string): SimSlurmCluster {
    return {
      id: this.random.uuid(),
      name,
      version,
      loginNodes: [{ name: `${name}-login-01`, publicIP: this.nextPublicIp() }],
      pools: new Map(),
      users: new Map(),
    };
  }

  createSlurmCluster(project: SimProject, name: string, version: string): SimSlurmCluster {
    this.ensureUniqueCluster(project, 'slurm', name);
    const cluster = this.newSlurmCluster(name, version);
    project.slurm.set(cluster.id, cluster);
    return cluster;
  }

  createSlurmPool(cluster: SimSlurmCluster, input: PoolInput): SimSlurmPool {
    return this.addPool(cluster, input, (type) => this.newPool(cluster, input, type, true));
  }

  addSlurmUser(cluster: SimSlurmCluster, user: SimSlurmUser): SimSlurmUser {
    if (cluster.users.has(user.username)) {
      throw new SimError(
        SimErrorKind.Conflict,
        `username: "${user.username}" is already a user of cluster ${cluster.name}; update it instead.`,
        'username',
      );
    }
    const stored: SimSlurmUser = { username: user.username, sshKeys: [...user.sshKeys], sudo: user.sudo };
    cluster.users.set(stored.username, stored);
    return stored;
  }

  getSlurmUser(cluster: SimSlurmCluster, username: string): SimSlurmUser {
    const u = cluster.users.get(username);
    if (!u)
      throw new SimError(
        SimErrorKind.NotFound,
        `User ${username.slice(0, 40)} is not on cluster ${cluster.name}.`,
      );
    return u;
  }

  updateSlurmUser(
    cluster: SimSlurmCluster,
    username: string,
    sshKeys: string[],
    sudo: boolean | undefined,
  ): SimSlurmUser {
    const u = this.getSlurmUser(cluster, username);
    u.sshKeys = [...sshKeys];
    if (sudo !== undefined) u.sudo = sudo;
    return u;
  }

  deleteSlurmUser(cluster: SimSlurmCluster, username: string): void {
    cluster.users.delete(this.getSlurmUser(cluster, username).username);
  }
}
