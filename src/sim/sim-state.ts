import { randomBytes } from 'node:crypto';
import { UUID } from '../cloud/rules.js';
import type { Shape } from '../cloud/shape.js';
import { SIM_INSTANCE_TYPES, type SimInstanceType } from './catalog.js';
import type { SimMetricsInstance } from './metrics/index.js';
import type { SeededRandom } from './seeded-random.js';
import type { SimClock } from './sim-clock.js';
import { SimError, SimErrorKind } from './sim-error.js';

// The simulated cloud's state and rules, without HTTP: projects and everything in them, capacity,
// account SSH keys, the instance state machine on the clock, and the count of create requests.

export type InstanceState = 'creating' | 'starting' | 'running' | 'stopping' | 'stopped' | 'deleting';
export type GpuLoad = 'idle' | 'busy' | 'auto';
export const GPU_LOADS = ['idle', 'busy', 'auto'] as const;

export interface SimInstance {
  readonly id: string;
  readonly projectId: string;
  readonly name: string;
  readonly type: SimInstanceType;
  state: InstanceState;
  ip: string | null;
  /** Bare image name (responses carry no image:// prefix). */
  readonly image: string;
  readonly preemptible: boolean;
  readonly ephemeral: boolean;
  readonly userData: string | null;
  readonly filesystems: readonly string[];
  readonly tags: Readonly<Record<string, string>>;
  readonly createdAt: number;
  /** When it last became running (sim clock ms), null while not running. */
  startedAt: number | null;
  load: GpuLoad;
  /** Bumped by every state change so a superseded scheduled transition does nothing. */
  epoch: number;
  readonly via: 'infrastructure' | 'platform';
}

export interface SimFilesystem {
  readonly id: string;
  readonly name: string;
  readonly size: string;
}

export interface SimNode {
  readonly name: string;
  readonly instanceID: string;
  readonly createdAt: number;
  readonly publicIP: string;
  readonly privateIP: string;
}

/** A node pool of either kind of cluster; a Slurm pool is just this. */
export interface SimPool {
  readonly id: string;
  readonly name: string;
  readonly clusterId: string;
  readonly type: SimInstanceType;
  readonly count: number;
  readonly nodes: readonly SimNode[];
  /** Seeded pools stand on hardware outside the sellable capacity. */
  readonly holdsCapacity: boolean;
}

export interface SimK8sPool extends SimPool {
  readonly version: string;
}

export type SimSlurmPool = SimPool;

/** What Kubernetes and Slurm clusters share: pools are found, added and removed the same way. */
export interface SimPoolCluster<P extends SimPool> {
  readonly id: string;
  readonly name: string;
  readonly pools: Map<string, P>;
}

export interface SimK8sCluster {
  readonly id: string;
  readonly name: string;
  version: string;
  readonly certificateAuthorityData: string;
  status: 'PROVISIONING' | 'READY';
  labels: Record<string, string>;
  readonly registered: boolean;
  readonly podCIDRBlock: string;
  readonly serviceCIDRBlock: string;
  readonly createdAt: number;
  readonly pools: Map<string, SimK8sPool>;
  /** Bearer token inside the kubeconfig this cluster hands out. */
  readonly adminToken: string;
}

export interface SimSlurmUser {
  readonly username: string;
  sshKeys: string[];
  sudo: boolean;
}

export interface SimSlurmCluster {
  readonly id: string;
  readonly name: string;
  readonly version: string;
  readonly loginNodes: ReadonlyArray<{ readonly name: string; readonly publicIP: string }>;
  readonly pools: Map<string, SimSlurmPool>;
  readonly users: Map<string, SimSlurmUser>;
}

export interface SimProject {
  readonly id: string;
  readonly name: string;
  readonly state: 'active';
  readonly tags: Readonly<Record<string, string>>;
  /** False for the "other" project the simulator's credentials may not use (403 in shapes A and B). */
  readonly member: boolean;
  readonly instances: Map<string, SimInstance>;
  readonly filesystems: Map<string, SimFilesystem>;
  readonly k8s: Map<string, SimK8sCluster>;
  readonly slurm: Map<string, SimSlurmCluster>;
}

/** The project maps that hold clusters, with the cluster each holds. */
export interface SimClusters {
  readonly k8s: SimK8sCluster;
  readonly slurm: SimSlurmCluster;
}
export type ClusterKind = keyof SimClusters;

/** How messages name each kind of cluster. */
const CLUSTER_NOUN: Readonly<Record<ClusterKind, string>> = {
  k8s: 'Kubernetes cluster',
  slurm: 'Slurm cluster',
};

export interface CreateInstanceInput {
  readonly name: string;
  readonly type: string;
  readonly image: string;
  readonly preemptible: boolean;
  readonly ephemeral: boolean;
  readonly userData: string | null;
  readonly filesystems: readonly string[];
  readonly tags: Readonly<Record<string, string>>;
  readonly via?: 'infrastructure' | 'platform';
}

export interface PoolInput {
  readonly name: string;
  readonly type: string;
  readonly count: number;
  readonly version?: string;
}

/** What the metrics side sees of a running instance. */
export type RunningInstanceView = SimMetricsInstance;

/** `{ operation: { name: count } }` */
export type CreateCounts = Record<string, Record<string, number>>;
/** What GET /_sim/creates answers: the counts by operation, and `attempts` counted the same way. */
export interface CreateCountsReport {
  readonly [operation: string]: Readonly<Record<string, number>> | CreateCounts;
  readonly attempts: CreateCounts;
}

function bump(table: Map<string, Map<string, number>>, operation: string, name: string): void {
  let byName = table.get(operation);
  if (!byName) {
    byName = new Map();
    table.set(operation, byName);
  }
  byName.set(name, (byName.get(name) ?? 0) + 1);
}

/** The entry of `map` for `id` (ids are stored lowercase), or a NotFound naming `what` and `where`. */
function found<T>(map: ReadonlyMap<string, T>, id: string, what: string, where: string): T {
  const value = map.get(id.toLowerCase());
  if (!value)
    throw new SimError(SimErrorKind.NotFound, `${what} ${id.slice(0, 40)} was not found in ${where}.`);
  return value;
}

function plainCounts(table: Map<string, Map<string, number>>): CreateCounts {
  return Object.fromEntries([...table].map(([op, byName]) => [op, Object.fromEntries(byName)]));
}

export interface SimStateOptions {
  readonly shape: Shape;
  readonly random: SeededRandom;
  readonly clock: SimClock;
  readonly transitionMs: number;
}

export const DEFAULT_PROJECT_NAME = 'default';
export const OTHER_PROJECT_NAME = 'other';
export const DEFAULT_K8S_VERSION = 'v1.31.2';
export const DEFAULT_SLURM_VERSION = '24.05.6';

const KNOWN_TYPES = SIM_INSTANCE_TYPES.map((t) => t.name).join(', ');

function fakeCertificate(): string {
  const body = randomBytes(96).toString('base64');
  return Buffer.from(`-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n`).toString('base64');
}

export class SimState {
  readonly shape: Shape;
  readonly defaultProjectId: string;
  readonly otherProjectId: string | undefined;
  private readonly random: SeededRandom;
  private readonly clock: SimClock;
  private readonly transitionMs: number;
  private readonly projects = new Map<string, SimProject>();
  private readonly capacity = new Map<string, number>();
  readonly sshKeys = new Map<string, string>();
  private readonly creates = new Map<string, Map<string, number>>();
  private readonly attempts = new Map<string, Map<string, number>>();
  private privateIpSeq: number;
  private publicIpSeq: number;

  constructor(options: SimStateOptions) {
    this.shape = options.shape;
    this.random = options.random;
    this.clock = options.clock;
    this.transitionMs = options.transitionMs;
    this.defaultProjectId = this.random.uuid();
    // Shape C lists no 403, so it has no project the caller may not use.
    this.otherProjectId = this.shape === 'C' ? undefined : this.random.uuid();
    this.privateIpSeq = 2 + Math.floor(this.random.next() * 1000);
    this.publicIpSeq = 2 + Math.floor(this.random.next() * 1000);
    this.reset();
  }

  /** Back to the start state: same project ids, full capacity, no keys, counts or transitions. */
  reset(): void {
    this.clock.clear();
    this.projects.clear();
    this.capacity.clear();
    this.sshKeys.clear();
    this.creates.clear();
    this.attempts.clear();
    for (const t of SIM_INSTANCE_TYPES) this.capacity.set(t.name, t.capacity);
    const main = this.addProject(this.defaultProjectId, DEFAULT_PROJECT_NAME, {}, true);
    if (this.otherProjectId) this.addProject(this.otherProjectId, OTHER_PROJECT_NAME, {}, false);
    // Shapes A and C cannot create Slurm clusters, so one exists from the start to list and add users to.
    if (this.shape !== 'B') this.seedSlurm(main);
  }

  private addProject(id: string, name: string, tags: Record<string, string>, member: boolean): SimProject {
    const project: SimProject = {
      id,
      name,
      state: 'active',
      tags,
      member,
      instances: new Map(),
      filesystems: new Map(),
      k8s: new Map(),
      slurm: new Map(),
    };
    this.projects.set(id, project);
    return project;
  }

  private seedSlurm(project: SimProject): void {
    const cluster = this.newSlurmCluster('slurm-1', DEFAULT_SLURM_VERSION);
    project.slurm.set(cluster.id, cluster);
    const type = SIM_INSTANCE_TYPES.find((t) => t.name === 'h100-hgx-80gb.8x') ?? SIM_INSTANCE_TYPES[0]!;
    const pool = this.newPool(cluster, { name: 'gpu', type: type.name, count: 2 }, type, false);
    cluster.pools.set(pool.id, pool);
  }

  // --- addresses ------------------------------------------------------------------------------------

  private nextPrivateIp(): string {
    const n = this.privateIpSeq++;
    return `10.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
  }

  private nextPublicIp(): string {
    // 198.18.0.0/15 is reserved for benchmarking: plausible, never routable to a real host.
    const n = this.publicIpSeq++;
    return `198.${18 + ((n >>> 16) & 1)}.${(n >>> 8) & 255}.${n & 255}`;
  }

  // --- projects ---------------------------------------------------------------------------------------

  /** The project an X-PROJECT-ID header names, or the reason it cannot be used. */
  resolveProject(header: string | undefined): SimProject {
    if (header === undefined || header.trim() === '') {
      throw new SimError(
        SimErrorKind.ProjectHeader,
        'X-PROJECT-ID header is required: the UUID of a project.',
      );
    }
    const id = header.trim();
    if (!UUID.test(id)) {
      throw new SimError(
        SimErrorKind.ProjectHeader,
        `X-PROJECT-ID must be a UUID; got "${id.slice(0, 40)}".`,
      );
    }
    const project = this.projects.get(id.toLowerCase());
    if (!project) throw new SimError(SimErrorKind.UnknownProject, `Project ${id} was not found.`);
    if (!project.member) {
      throw new SimError(
        SimErrorKind.Forbidden,
        `You are not a member of project ${id}; use a project of your own.`,
      );
    }
    return project;
  }

  createProject(name: string, tags: Record<string, string>): SimProject {
    return this.addProject(this.random.uuid(), name, tags, true);
  }

  listProjects(): SimProject[] {
    return [...this.projects.values()].filter((p) => p.member);
  }

  getProject(id: string): SimProject {
    const project = this.projects.get(id.toLowerCase());
    if (!project?.member) throw new SimError(SimErrorKind.NotFound, `Project ${id} was not found.`);
    return project;
  }

  deleteProject(id: string): void {
    const project = this.getProject(id);
    for (const inst of project.instances.values()) this.release(inst.type.name, 1);
    for (const c of project.k8s.values()) this.releasePools(c.pools.values());
    for (const c of project.slurm.values()) this.releasePools(c.pools.values());
    this.projects.delete(project.id);
  }

  allProjects(): IterableIterator<SimProject> {
    return this.projects.values();
  }

  // --- capacity ----------------------------------------------------------------------------------------

  instanceType(name: string, field = 'type'): SimInstanceType {
    const type = SIM_INSTANCE_TYPES.find((t) => t.name === name);
    if (!type) {
      throw new SimError(
        SimErrorKind.Invalid,
        `${field}: "${name.slice(0, 60)}" is not an instance type; choose one of ${KNOWN_TYPES}.`,
        field,
      );
    }
    return type;
  }

  private take(type: SimInstanceType, count: number, field = 'type'): void {
    const left = this.capacity.get(type.name) ?? 0;
    if (left < count) {
      throw new SimError(
        SimErrorKind.Invalid,
        `${field}: instance type ${type.name} is out of capacity (${left} left, ${count} asked); choose another type or try again later.`,
        field,
      );
    }
    this.capacity.set(type.name, left - count);
  }

  private release(typeName: string, count: number): void {
    this.capacity.set(typeName, (this.capacity.get(typeName) ?? 0) + count);
  }

  private releasePools(pools: Iterable<SimPool>): void {
    for (const p of pools) if (p.holdsCapacity) this.release(p.type.name, p.count);
  }

  remainingCapacity(): Array<{ name: string; capacity: number }> {
    return SIM_INSTANCE_TYPES.map((t) => ({ name: t.name, capacity: this.capacity.get(t.name) ?? 0 }));
  }

  setCapacity(typeName: string, capacity: number): void {
    const type = this.instanceType(typeName);
    if (!Number.isInteger(capacity) || capacity < 0) {
      throw new SimError(SimErrorKind.Invalid, 'capacity: must be a whole number of at least 0.', 'capacity');
    }
    this.capacity.set(type.name, capacity);
  }

  // --- instances ---------------------------------------------------------------------------------------

  createInstance(project: SimProject, input: CreateInstanceInput): SimInstance {
    const type = this.instanceType(input.type);
    input.filesystems.forEach((fsId, i) => {
      if (!project.filesystems.has(fsId.toLowerCase())) {
        throw new SimError(
          SimErrorKind.BadReference,
          `filesystems[${i}]: no filesystem ${fsId.slice(0, 40)} in project ${project.id}; create it first or remove it from the request.`,
          'filesystems',
        );
      }
    });
    this.take(type, 1);
    const inst: SimInstance = {
      id: this.random.uuid(),
      projectId: project.id,
      name: input.name,
      type,
      state: 'creating',
      ip: null,
      image: input.image,
      preemptible: input.preemptible,
      ephemeral: input.ephemeral,
      userData: input.userData,
      filesystems: input.filesystems.map((f) => f.toLowerCase()),
      tags: input.tags,
      createdAt: this.clock.now(),
      startedAt: null,
      load: 'auto',
      epoch: 0,
      via: input.via ?? 'infrastructure',
    };
    project.instances.set(inst.id, inst);
    this.moveTo(project, inst, 'running');
    return inst;
  }

  getInstance(project: SimProject, id: string): SimInstance {
    return found(project.instances, id, 'Instance', `project ${project.id}`);
  }

  startInstance(project: SimProject, id: string): SimInstance {
    const inst = this.getInstance(project, id);
    if (inst.state !== 'stopped') {
      throw new SimError(
        SimErrorKind.WrongState,
        `Instance ${inst.name} is ${inst.state}; only a stopped instance can be started.`,
      );
    }
    inst.state = 'starting';
    this.moveTo(project, inst, 'running');
    return inst;
  }

  stopInstance(project: SimProject, id: string): SimInstance {
    const inst = this.getInstance(project, id);
    if (inst.state !== 'running') {
      throw new SimError(
        SimErrorKind.WrongState,
        `Instance ${inst.name} is ${inst.state}; only a running instance can be stopped.`,
      );
    }
    inst.state = 'stopping';
    inst.startedAt = null;
    this.moveTo(project, inst, 'stopped');
    return inst;
  }

  deleteInstance(project: SimProject, id: string): void {
    const inst = this.getInstance(project, id);
    if (inst.state === 'deleting') {
      // Delete lists no 409; the instance is on its way out, so "not found" is the honest listed answer.
      throw new SimError(SimErrorKind.NotFound, `Instance ${inst.name} is already being deleted.`);
    }
    inst.state = 'deleting';
    inst.startedAt = null;
    this.moveTo(project, inst, 'gone');
  }

  /** Schedules the end of the current transition; a later state change supersedes it. */
  private moveTo(project: SimProject, inst: SimInstance, to: 'running' | 'stopped' | 'gone'): void {
    const epoch = ++inst.epoch;
    this.clock.at(this.clock.now() + this.transitionMs, () => {
      if (inst.epoch !== epoch || project.instances.get(inst.id) !== inst) return;
      if (to === 'gone') {
        project.instances.delete(inst.id);
        this.release(inst.type.name, 1);
        return;
      }
      inst.epoch++;
      inst.state = to;
      if (to === 'running') {
        inst.ip ??= this.nextPrivateIp();
        inst.startedAt = this.clock.now();
      }
    });
  }

  setLoad(id: string, load: GpuLoad): SimInstance {
    for (const project of this.projects.values()) {
      const inst = project.instances.get(id.toLowerCase());
      if (inst) {
        inst.load = load;
        return inst;
      }
    }
    throw new SimError(SimErrorKind.NotFound, `Instance ${id.slice(0, 40)} was not found in any project.`);
  }

  runningInstances(): RunningInstanceView[] {
    const out: RunningInstanceView[] = [];
    for (const project of this.projects.values()) {
      for (const inst of project.instances.values()) {
        if (inst.state !== 'running' || inst.startedAt === null) continue;
        out.push({
          id: inst.id,
          name: inst.name,
          type: inst.type.name,
          projectId: project.id,
          gpuCount: inst.type.gpuCount,
          gpuModel: inst.type.gpuModel,
          gpuMemoryGiB: inst.type.gpuMemoryGiB,
          maxPowerWatts: inst.type.maxPowerWatts,
          startedAt: inst.startedAt,
          load: inst.load,
        });
      }
    }
    return out;
  }

  // --- filesystems -------------------------------------------------------------------------------------

  createFilesystem(project: SimProject, name: string, size: string): SimFilesystem {
    const fs: SimFilesystem = { id: this.random.uuid(), name, size };
    project.filesystems.set(fs.id, fs);
    return fs;
  }

  getFilesystem(project: SimProject, id: string): SimFilesystem {
    return found(project.filesystems, id, 'Filesystem', `project ${project.id}`);
  }

  deleteFilesystem(project: SimProject, id: string): void {
    project.filesystems.delete(this.getFilesystem(project, id).id);
  }

  // --- nodes -------------------------------------------------------------------------------------------

  private newNodes(prefix: string, count: number): SimNode[] {
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

  private clustersOf<K extends ClusterKind>(project: SimProject, kind: K): Map<string, SimClusters[K]> {
    return project[kind] as Map<string, SimClusters[K]>;
  }

  private ensureUniqueCluster(project: SimProject, kind: ClusterKind, name: string): void {
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

  private newPool(
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
  private addPool<P extends SimPool>(
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

  private newK8sPool(
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

  private newSlurmCluster(name: string, version: string): SimSlurmCluster {
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

  // --- create counts -----------------------------------------------------------------------------------

  /** Every create request received, before auth and faults (the `attempts` of the report). */
  countCreateAttempt(operation: string, name: string): void {
    bump(this.attempts, operation, name);
  }

  /** A create request that reached its handler, whether it then succeeded or not. */
  countCreate(operation: string, name: string): void {
    bump(this.creates, operation, name);
  }

  /** How many create requests for `name` reached the handler of `operation`. */
  createCount(operation: string, name: string): number {
    return this.creates.get(operation)?.get(name) ?? 0;
  }

  /** Creates that reached the handler, plus `attempts` including those rejected by auth or faults. */
  createCounts(): CreateCountsReport {
    return { ...plainCounts(this.creates), attempts: plainCounts(this.attempts) };
  }
}
