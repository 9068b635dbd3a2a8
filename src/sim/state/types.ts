import { randomBytes } from 'node:crypto';
import type { Shape } from '../../cloud/shape.js';
import { SIM_INSTANCE_TYPES, type SimInstanceType } from '../catalog.js';
import type { SimMetricsInstance } from '../metrics/index.js';
import type { SeededRandom } from '../seeded-random.js';
import type { SimClock } from '../sim-clock.js';
import { SimError, SimErrorKind } from '../sim-error.js';

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
export const CLUSTER_NOUN: Readonly<Record<ClusterKind, string>> = {
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

export function bump(table: Map<string, Map<string, number>>, operation: string, name: string): void {
  let byName = table.get(operation);
  if (!byName) {
    byName = new Map();
    table.set(operation, byName);
  }
  byName.set(name, (byName.get(name) ?? 0) + 1);
}

/** The entry of `map` for `id` (ids are stored lowercase), or a NotFound naming `what` and `where`. */
export function found<T>(map: ReadonlyMap<string, T>, id: string, what: string, where: string): T {
  const value = map.get(id.toLowerCase());
  if (!value)
    throw new SimError(SimErrorKind.NotFound, `${what} ${id.slice(0, 40)} was not found in ${where}.`);
  return value;
}

export function plainCounts(table: Map<string, Map<string, number>>): CreateCounts {
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

export const KNOWN_TYPES = SIM_INSTANCE_TYPES.map((t) => t.name).join(', ');

export function fakeCertificate(): string {
  const body = randomBytes(96).toString('base64');
  return Buffer.from(`-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n`).toString('base64');
}
