import { z } from 'zod';
import { CloudSchemaError } from './cloud-errors.js';
import { IMAGE_PREFIX } from './rules.js';
import type { Shape } from './shape.js';

// Zod schemas of every resource and request body of the cloud interface.
//
// Responses: one "wide" schema per resource (its inferred type is what the rest of the app sees, with
// shape-specific fields optional) and, where shapes differ in what is required, a per-shape schema
// that demands exactly that. Unknown extra fields are kept (looseObject) so a newer cloud does not
// break us; state fields accept any string for the same reason (known values are listed in docs).
// Required fields follow the reference documents (shape B's and C's `required` lists); fields only the
// spec mentions for one shape are optional, so a quiet API change shows up as a missing value, not an outage.

const str = z.string();
export const stringMap = z.record(z.string(), z.string());
/** Instance and cluster states: known values documented, any string accepted. */
const state = z.string();

// ─── Responses ────────────────────────────────────────────────────────────────────────────────

export const projectSchema = z.looseObject({
  id: str,
  name: str,
  state: state.optional(),
  tags: stringMap.optional(),
});
export type Project = z.infer<typeof projectSchema>;
/** A and B: the infrastructure v1alpha1 document requires state and tags. */
const projectAB = projectSchema.extend({ state, tags: stringMap });

/** Responses carry the bare image name; a stray image:// prefix is removed so callers see one form. */
const imageName = str.transform((v) => (v.startsWith(IMAGE_PREFIX) ? v.slice(IMAGE_PREFIX.length) : v));

export const instanceSchema = z.looseObject({
  id: str,
  name: str,
  type: str,
  state,
  image: imageName,
  ip: str.nullable().optional(),
  preemptible: z.boolean(),
  ephemeral: z.boolean().optional(),
  userData: str.nullable(),
  tags: stringMap.optional(),
  /** B and C. */
  filesystems: z.array(str).optional(),
  /** A only. */
  cluster_id: str.nullable().optional(),
});
export type Instance = z.infer<typeof instanceSchema>;
const instanceA = instanceSchema.extend({ ip: str.nullable(), ephemeral: z.boolean(), tags: stringMap });
const instanceB = instanceA.extend({ filesystems: z.array(str) });
const instanceC = instanceSchema.extend({ filesystems: z.array(str) });

export const filesystemSchema = z.looseObject({ id: str, name: str, size: str });
export type Filesystem = z.infer<typeof filesystemSchema>;

export const k8sClusterSchema = z.looseObject({
  id: str,
  name: str,
  version: str,
  /** A, B. */
  certificateAuthorityData: str.optional(),
  endpoint: str.optional(),
  /** A: status.type READY occurs. */
  status: z.looseObject({ type: state, details: z.record(z.string(), z.unknown()).optional() }).optional(),
  labels: stringMap.optional(),
});
export type KubernetesCluster = z.infer<typeof k8sClusterSchema>;

export const acceleratorSchema = z.looseObject({
  type: str,
  product: str,
  driverVersion: str,
  /** A only. */
  cudaVersion: str.optional(),
  /** A only. */
  count: z.number().int().optional(),
});
export type Accelerator = z.infer<typeof acceleratorSchema>;

export const k8sNodeSchema = z.looseObject({
  name: str,
  instanceID: str,
  state,
  kubeletVersion: str,
  createdAt: str,
  conditions: z.array(
    z.looseObject({
      type: str.optional(),
      status: str.optional(),
      lastHeartbeatTime: str.optional(),
      lastTransitionTime: str.optional(),
      reason: str.optional(),
      message: str.optional(),
    }),
  ),
  /** A only. */
  publicIP: str.optional(),
  /** A only. */
  privateIP: str.optional(),
  accelerator: acceleratorSchema.optional(),
  labels: stringMap.optional(),
  taints: z
    .array(z.looseObject({ key: str.optional(), value: str.optional(), effect: str.optional() }))
    .optional(),
});
export type KubernetesNode = z.infer<typeof k8sNodeSchema>;

export const k8sNodePoolSchema = z.looseObject({
  id: str,
  name: str,
  /** Name of the owning cluster. */
  cluster: str,
  type: str,
  count: z.number().int(),
  version: str,
  /** A and B; absent in C. */
  nodes: z.array(k8sNodeSchema).optional(),
});
export type KubernetesNodePool = z.infer<typeof k8sNodePoolSchema>;

export const slurmClusterSchema = z.looseObject({
  id: str,
  name: str,
  /** A, B. */
  version: str.optional(),
  /** A, B. */
  loginNodes: z.array(z.looseObject({ name: str, publicIP: str.optional() })).optional(),
});
export type SlurmCluster = z.infer<typeof slurmClusterSchema>;
const slurmClusterAB = slurmClusterSchema.extend({ version: str });

export const slurmNodeSchema = z.looseObject({
  name: str,
  instanceID: str,
  states: z.array(str),
  slurmdVersion: str,
  partitions: z.array(str).optional(),
  reservation: str.optional(),
  reason: str.optional(),
  /** A only. */
  publicIP: str.optional(),
  /** A only. */
  privateIP: str.optional(),
  /** A only. */
  accelerator: acceleratorSchema.optional(),
});
export type SlurmNode = z.infer<typeof slurmNodeSchema>;

export const slurmNodePoolSchema = z.looseObject({
  id: str,
  name: str,
  type: str,
  /** A, B. */
  count: z.number().int().optional(),
  /** A, B. */
  nodes: z.array(slurmNodeSchema).optional(),
});
export type SlurmNodePool = z.infer<typeof slurmNodePoolSchema>;
const slurmNodePoolAB = slurmNodePoolSchema.extend({
  count: z.number().int(),
  nodes: z.array(slurmNodeSchema),
});

export const slurmUserSchema = z.looseObject({
  username: str,
  sshKeys: z.array(str),
  /** Absent reads as false, the spec's default on add. */
  sudo: z.boolean().default(false),
});
export type SlurmUser = z.infer<typeof slurmUserSchema>;

export const capacityEntrySchema = z.looseObject({ name: str, capacity: z.number().int() });
export type CapacityEntry = z.infer<typeof capacityEntrySchema>;

/** Platform API. `public_key` may be null in the legacy document's SSHKeyResponse. */
export const sshKeySchema = z.looseObject({ name: str, public_key: str.nullable().optional() });
export type SshKey = z.infer<typeof sshKeySchema>;

export const configurationSchema = z.looseObject({
  gpu_type: str,
  gpu_counts: z.array(z.number().int()),
  /** Decimal string, e.g. "2.89"; kept as text so no price is rounded. */
  price_per_gpu_hr: str,
  stopped_price_per_hour: str,
  regions: z.array(str),
  /** The legacy document gives 5 as the default when absent. */
  estimated_provisioning_time_minutes: z.number().int().default(5),
});
export type Configuration = z.infer<typeof configurationSchema>;

/** Platform API's 202 answer to create-by-gpu_type. */
export const platformCreateResponseSchema = z.looseObject({
  id: str,
  name: str,
  gpu_type: str,
  operating_system_label: str.nullable().optional(),
});
export type PlatformCreateResponse = z.infer<typeof platformCreateResponseSchema>;

/** Response schemas per shape; the type is always the wide one above. */
export interface ResponseSchemas {
  readonly project: z.ZodType<Project>;
  readonly instance: z.ZodType<Instance>;
  readonly filesystem: z.ZodType<Filesystem>;
  readonly k8sCluster: z.ZodType<KubernetesCluster>;
  readonly k8sNodePool: z.ZodType<KubernetesNodePool>;
  readonly slurmCluster: z.ZodType<SlurmCluster>;
  readonly slurmNodePool: z.ZodType<SlurmNodePool>;
  readonly slurmUser: z.ZodType<SlurmUser>;
  readonly capacityEntry: z.ZodType<CapacityEntry>;
}

const common = {
  filesystem: filesystemSchema,
  k8sCluster: k8sClusterSchema,
  k8sNodePool: k8sNodePoolSchema,
  slurmUser: slurmUserSchema,
  capacityEntry: capacityEntrySchema,
};

export const RESPONSE_SCHEMAS: Readonly<Record<Shape, ResponseSchemas>> = {
  A: {
    ...common,
    project: projectAB,
    instance: instanceA,
    slurmCluster: slurmClusterAB,
    slurmNodePool: slurmNodePoolAB,
  },
  B: {
    ...common,
    project: projectAB,
    instance: instanceB,
    slurmCluster: slurmClusterAB,
    slurmNodePool: slurmNodePoolAB,
  },
  C: {
    ...common,
    project: projectSchema,
    instance: instanceC,
    slurmCluster: slurmClusterSchema,
    slurmNodePool: slurmNodePoolSchema,
  },
};

/** `[0].nodes[2].instanceID` from zod's path array. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out === '' ? String(p) : `.${String(p)}`;
  }
  return out;
}

/** The value an issue's path points at, to tell "missing" from "wrong type". */
function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

export function isMissing(issue: z.core.$ZodIssue, root: unknown): boolean {
  return issue.code === 'invalid_type' && valueAt(root, issue.path) === undefined;
}

/** Validates a success body; the first problem becomes a CloudSchemaError naming operation and field. */
export function parseResponse<T>(schema: z.ZodType<T>, body: unknown, operation: string): T {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const expected = issue.code === 'invalid_type' ? issue.expected : 'a value';
  const problem = isMissing(issue, body) ? `required field missing, expected ${expected}` : issue.message;
  throw new CloudSchemaError(operation, formatPath(issue.path), problem);
}
