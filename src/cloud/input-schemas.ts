import { z } from 'zod';
import { ValidationError } from '../errors.js';
import {
  BASE64_RULE,
  CIDR_RULE,
  checkBase64,
  checkCidr,
  checkImageRef,
  checkK8sVersion,
  checkSize,
  checkTagKey,
  checkUsername,
  DEFAULT_POD_CIDR,
  DEFAULT_SERVICE_CIDR,
  IMAGE_RULE,
  K8S_VERSION_RULE,
  parseSshPublicKey,
  SIZE_RULE,
  TAG_KEY_RULE,
  toImageRef,
  USERNAME_RULE,
  UUID,
} from './rules.js';
import { formatPath, isMissing, stringMap } from './schemas.js';
import type { Shape } from './shape.js';

// Request bodies of the cloud interface, checked before anything is sent: a bad value is a
// ValidationError naming the field and its rule, never a 400 from the cloud.

// ─── Requests ─────────────────────────────────────────────────────────────────────────────────

const name = z.string({ error: 'must be a text value' }).min(1, { error: 'must not be empty' });

const tags = stringMap.superRefine((value, ctx) => {
  for (const key of Object.keys(value)) {
    if (checkTagKey(key) !== null)
      ctx.addIssue({ code: 'custom', message: `key "${key.slice(0, 70)}": ${TAG_KEY_RULE}` });
  }
});

const labels = stringMap;

const k8sVersion = z.string().refine((v) => checkK8sVersion(v) === null, { error: K8S_VERSION_RULE });

const cidr = z.string().refine((v) => checkCidr(v) === null, { error: CIDR_RULE });

/** Accepts a bare image name or an image:// reference; sends the reference. */
const imageRef = z
  .string()
  .transform(toImageRef)
  .refine((v) => checkImageRef(v) === null, { error: IMAGE_RULE });

const userData = z
  .string()
  .refine((v) => checkBase64(v) === null, { error: BASE64_RULE })
  .nullable();

const uuidRef = (what: string) =>
  z.string().regex(UUID, {
    error: `${what} is given by its id, a UUID such as 3f1c2a9e-8b7d-4c1e-9f2a-1b2c3d4e5f60`,
  });

const count = z
  .number({ error: 'must be a whole number' })
  .int({ error: 'must be a whole number' })
  .min(1, { error: 'must be at least 1' });

const sshKeyList = z.array(z.string()).superRefine((keys, ctx) => {
  if (keys.length === 0)
    ctx.addIssue({ code: 'custom', message: 'at least one SSH public key is needed to log in' });
  keys.forEach((key, i) => {
    const parsed = parseSshPublicKey(key);
    if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', path: [i], message: parsed });
  });
});

export const sshPublicKey = z.string().superRefine((key, ctx) => {
  const parsed = parseSshPublicKey(key);
  if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: parsed });
});

export const createProjectInput = z.object({ name, tags: tags.optional() });
export type CreateProjectInput = z.input<typeof createProjectInput>;

export const createInstanceInput = z.object({
  name,
  type: name,
  /** image://<name> or a bare name; the client's default image when omitted. */
  image: imageRef.optional(),
  preemptible: z.boolean().optional(),
  ephemeral: z.boolean().optional(),
  /** cloud-init user data, base64-encoded. */
  userData: userData.optional(),
  /** Filesystem ids to attach (B, C). */
  filesystems: z.array(uuidRef('a filesystem')).optional(),
  tags: tags.optional(),
});
export type CreateInstanceInput = z.input<typeof createInstanceInput>;
/** Shape A has no filesystems. */
const createInstanceInputA = createInstanceInput.extend({
  filesystems: z.undefined({ error: 'not available in shape A' }).optional(),
});

export const createFilesystemInput = z.object({
  name,
  size: z.string().refine((v) => checkSize(v) === null, { error: SIZE_RULE }),
});
export type CreateFilesystemInput = z.input<typeof createFilesystemInput>;

export const defaultNodePoolInput = z.object({
  create: z.boolean().optional(),
  name: name.optional(),
  type: name.optional(),
  count: count.optional(),
});

/** The union of what any shape accepts; per-shape schemas below narrow it. */
export const createK8sClusterInput = z.object({
  name,
  version: k8sVersion.optional(),
  /** A only; default 10.233.0.0/18. */
  podCIDRBlock: cidr.optional(),
  /** A only; default 10.233.64.0/18. */
  serviceCIDRBlock: cidr.optional(),
  /** A only. */
  defaultNodePool: defaultNodePoolInput.optional(),
});
export type CreateK8sClusterInput = z.input<typeof createK8sClusterInput>;
const notInShape = (shape: Shape) =>
  z.undefined({ error: `only available in shape A, not ${shape}` }).optional();
const createK8sClusterInputA = createK8sClusterInput.extend({
  version: k8sVersion,
  podCIDRBlock: cidr.default(DEFAULT_POD_CIDR),
  serviceCIDRBlock: cidr.default(DEFAULT_SERVICE_CIDR),
});
const createK8sClusterInputOther = (shape: Shape) =>
  createK8sClusterInput.extend({
    podCIDRBlock: notInShape(shape),
    serviceCIDRBlock: notInShape(shape),
    defaultNodePool: notInShape(shape),
  });

export const registerK8sClusterInput = z.object({
  name,
  kubeconfig: z.string().min(1, { error: 'must be the kubeconfig text of the cluster' }),
  labels: labels.optional(),
});
export type RegisterK8sClusterInput = z.input<typeof registerK8sClusterInput>;

export const updateK8sClusterInput = z.object({
  version: k8sVersion.optional(),
  /** Merged into the existing labels. */
  labels: labels.optional(),
});
export type UpdateK8sClusterInput = z.input<typeof updateK8sClusterInput>;

export const createK8sNodePoolInput = z.object({
  name,
  type: name,
  count,
  version: k8sVersion.optional(),
});
export type CreateK8sNodePoolInput = z.input<typeof createK8sNodePoolInput>;

export const createSlurmClusterInput = z.object({ name, version: z.string().min(1).optional() });
export type CreateSlurmClusterInput = z.input<typeof createSlurmClusterInput>;

export const createSlurmNodePoolInput = z.object({ name, type: name, count });
export type CreateSlurmNodePoolInput = z.input<typeof createSlurmNodePoolInput>;

const username = z.string().refine((v) => checkUsername(v) === null, { error: USERNAME_RULE });

export const addSlurmUserInput = z.object({ username, sshKeys: sshKeyList, sudo: z.boolean().optional() });
export type AddSlurmUserInput = z.input<typeof addSlurmUserInput>;

export const updateSlurmUserInput = z.object({ sshKeys: sshKeyList, sudo: z.boolean().optional() });
export type UpdateSlurmUserInput = z.input<typeof updateSlurmUserInput>;

export const addSshKeyInput = z.object({ name, public_key: sshPublicKey });
export type AddSshKeyInput = z.input<typeof addSshKeyInput>;

export const createByGpuTypeInput = z.object({
  name: name.optional(),
  gpu_type: name,
  gpu_count: count.default(1),
  ssh_key: name,
  operating_system_label: name.optional(),
  region: name.optional(),
});
export type CreateByGpuTypeInput = z.input<typeof createByGpuTypeInput>;

export const REQUEST_SCHEMAS = {
  createInstance: { A: createInstanceInputA, B: createInstanceInput, C: createInstanceInput },
  createK8sCluster: {
    A: createK8sClusterInputA,
    B: createK8sClusterInputOther('B'),
    C: createK8sClusterInputOther('C'),
  },
} as const;

/**
 * Checks an input before anything is sent. The first problem becomes a ValidationError naming the
 * field (dotted path) and the rule; a missing value says it is required.
 */
export function validateInput<T extends z.ZodType>(schema: T, input: unknown, prefix = ''): z.output<T> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = formatPath(issue.path);
  const field = prefix && path ? `${prefix}.${path}` : prefix || path || 'input';
  if (isMissing(issue, input)) {
    throw new ValidationError(field, 'is required', `${field} is required.`);
  }
  throw new ValidationError(field, issue.message, `${field} is not valid: ${issue.message}.`);
}
