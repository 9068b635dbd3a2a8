import type { Dispatcher } from 'undici';
import type { HttpCallEvent } from './http-client.js';
import type {
  AddSlurmUserInput,
  CreateFilesystemInput,
  CreateInstanceInput,
  CreateK8sClusterInput,
  CreateK8sNodePoolInput,
  CreateProjectInput,
  CreateSlurmClusterInput,
  CreateSlurmNodePoolInput,
  RegisterK8sClusterInput,
  UpdateK8sClusterInput,
  UpdateSlurmUserInput,
} from './input-schemas.js';
import type { RetryEvent, RetryOptions } from './retry.js';
import type { Operation, RouteTable } from './routes.js';
import type {
  CapacityEntry,
  Filesystem,
  Instance,
  KubernetesCluster,
  KubernetesNodePool,
  Project,
  SlurmCluster,
  SlurmNodePool,
  SlurmUser,
} from './schemas.js';
import type { Shape } from './shape.js';
import type { TokenProvider } from './token-provider.js';

// What the infrastructure client offers: one method per operation of the route tables.

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
  /**
   * Called when a try of this call failed and the client is about to try again: how a caller learns of a
   * try it abandoned (a timeout) that the cloud may still carry out.
   */
  readonly onRetry?: ((event: RetryEvent) => void) | undefined;
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
  /**
   * How long one call waits for an answer before this client gives up. Creates are never retried by
   * the client, so a create sent is answered or abandoned within this (src/commands/kit/earlier-send.ts).
   */
  readonly timeoutMs: number;
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
