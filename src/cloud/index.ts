// Public API of the cloud layer. Other folders import from here, not from the files inside.

export {
  CloudApiError,
  CloudAuthError,
  CloudBadRequestError,
  CloudConflictError,
  CloudErrorKind,
  CloudForbiddenError,
  CloudNetworkError,
  CloudNotAvailableError,
  CloudNotFoundError,
  CloudRateLimitError,
  CloudSchemaError,
  CloudServerError,
  CloudTimeoutError,
  CloudUnsupportedError,
  type FieldProblem,
} from './cloud-errors.js';
export {
  createHttpClient,
  createKeepAliveAgent,
  DEFAULT_TIMEOUT_MS,
  type HttpAuth,
  type HttpCallEvent,
  type HttpClient,
  type HttpClientOptions,
  type HttpRequest,
  type HttpResponse,
} from './http-client.js';
export { createInfraClient } from './infra-client.js';
export type {
  CallOptions,
  ClusterInput,
  IdInput,
  InfraClient,
  InfraClientOptions,
  PoolInput,
  SlurmUserRef,
} from './infra-client-types.js';
export type {
  AddSlurmUserInput,
  AddSshKeyInput,
  CreateByGpuTypeInput,
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
export { validateInput } from './input-schemas.js';
export {
  createPlatformClient,
  type PlatformCallOptions,
  type PlatformClient,
  type PlatformClientOptions,
} from './platform-client.js';
export {
  DEFAULT_RETRY_POLICY,
  isRetrySafe,
  isTransient,
  parseRetryAfter,
  type RetryEvent,
  type RetryOptions,
  type RetryPolicy,
  retryDelay,
  shouldRetry,
  withRetry,
} from './retry.js';
export {
  checkRoutePlaceholders,
  decodeKubeconfig,
  NO_PROJECT_RULE,
  parseRouteOverrides,
  resolveRoutes,
} from './route-params.js';
export {
  type HttpMethod,
  OPERATIONS,
  type Operation,
  operationsOf,
  ROUTES,
  type Route,
  type RouteTable,
  withOverrides,
} from './routes.js';
export type {
  Accelerator,
  CapacityEntry,
  Configuration,
  Filesystem,
  Instance,
  KubernetesCluster,
  KubernetesNode,
  KubernetesNodePool,
  PlatformCreateResponse,
  Project,
  SlurmCluster,
  SlurmNode,
  SlurmNodePool,
  SlurmUser,
  SshKey,
} from './schemas.js';
export {
  capacityEntrySchema,
  configurationSchema,
  filesystemSchema,
  instanceSchema,
  k8sClusterSchema,
  k8sNodePoolSchema,
  k8sNodeSchema,
  parseResponse,
  platformCreateResponseSchema,
  projectSchema,
  RESPONSE_SCHEMAS,
  slurmClusterSchema,
  slurmNodePoolSchema,
  slurmNodeSchema,
  slurmUserSchema,
  sshKeySchema,
} from './schemas.js';
export { SHAPES, type Shape } from './shape.js';
export {
  type ClientCredentialsOptions,
  clientCredentials,
  staticToken,
  type TokenProvider,
} from './token-provider.js';
