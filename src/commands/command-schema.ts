import { z } from 'zod';
import {
  checkImageRef,
  checkK8sVersion,
  checkSize,
  checkSshPublicKey,
  checkUsername,
  DEFAULT_IMAGE,
  K8S_VERSION_RULE,
  SIZE_RULE,
  USERNAME_RULE,
} from '../cloud/rules.js';
import {
  checkLabelKey,
  checkLabelValue,
  checkName,
  checkPromql,
  checkTagKey,
  checkTagValue,
  LABEL_KEY_RULE,
  LABEL_VALUE_RULE,
  MAX_AUDIT,
  MAX_COUNT,
  MAX_RANGE_SECONDS,
  MAX_WAITLIST_COUNT,
  MIN_RANGE_SECONDS,
  NAME_RULE,
  PROMQL_RULE,
  TAG_KEY_RULE,
  TAG_VALUE_RULE,
} from './value-rules.js';

// The typed result of parsing `/gpu …`: one zod schema per subcommand, joined into a discriminated
// union on `kind`. Job payloads and modals build on these, so every value rule is in the schema too.

/** Every subcommand, named by its words joined with dots. */
export const GPU_COMMAND_KINDS = [
  'help',
  'projects',
  'project',
  'project.use',
  'ls',
  'show',
  'create',
  'start',
  'stop',
  'rm',
  'capacity',
  'configs',
  'keys',
  'keys.add',
  'keys.rm',
  'fs',
  'fs.create',
  'fs.rm',
  'k8s.ls',
  'k8s.show',
  'k8s.create',
  'k8s.register',
  'k8s.rm',
  'k8s.upgrade',
  'k8s.label',
  'k8s.pools',
  'k8s.pool.add',
  'k8s.pool.rm',
  'k8s.kubeconfig',
  'slurm.ls',
  'slurm.show',
  'slurm.create',
  'slurm.rm',
  'slurm.pools',
  'slurm.pool.add',
  'slurm.pool.rm',
  'slurm.users',
  'slurm.adduser',
  'slurm.rmuser',
  'slurm.sudo',
  'metrics',
  'metrics.query',
  'watch',
  'jobs',
  'approvals',
  'waitlist',
  'waitlist.add',
  'waitlist.rm',
  'audit',
] as const;
export type GpuCommandKind = (typeof GPU_COMMAND_KINDS)[number];

/** The words a user types for a kind; `waitlist.add` is typed as `/gpu waitlist <type>`. */
export function commandPath(kind: GpuCommandKind): string {
  return kind === 'waitlist.add' ? 'waitlist' : kind.replaceAll('.', ' ');
}

/** Help topics: every command path and every leading part of one (`k8s`, `k8s pool`). */
export const HELP_TOPICS: readonly string[] = [
  ...new Set(
    GPU_COMMAND_KINDS.flatMap((kind) => {
      const words = commandPath(kind).split(' ');
      return words.map((_, i) => words.slice(0, i + 1).join(' '));
    }),
  ),
];

const ruled = (check: (v: string) => string | null, rule: string) =>
  z.string().refine((v) => check(v) === null, { error: rule });

const name = ruled(checkName, NAME_RULE);
const count = (max: number) => z.number().int().min(1).max(max);
const k8sVersion = ruled(checkK8sVersion, K8S_VERSION_RULE);
const username = ruled(checkUsername, USERNAME_RULE);
const tags = z.record(ruled(checkTagKey, TAG_KEY_RULE), ruled(checkTagValue, TAG_VALUE_RULE));
const labels = z
  .record(ruled(checkLabelKey, LABEL_KEY_RULE), ruled(checkLabelValue, LABEL_VALUE_RULE))
  .refine((v) => Object.keys(v).length > 0, { error: 'at least one label' });
const simple = <K extends GpuCommandKind>(kind: K) => z.object({ kind: z.literal(kind) });
const onName = <K extends GpuCommandKind, F extends string>(kind: K, field: F) =>
  z.object({ kind: z.literal(kind), ...({ [field]: name } as Record<F, typeof name>) });
const modal = <K extends GpuCommandKind>(kind: K) =>
  z.object({ kind: z.literal(kind), modal: z.literal(true) });

export const helpSchema = z.object({
  kind: z.literal('help'),
  topic: z
    .string()
    .refine((t) => HELP_TOPICS.includes(t), { error: 'a known help topic' })
    .optional(),
});
export const projectUseSchema = onName('project.use', 'project');

export const createArgsSchema = z.object({
  kind: z.literal('create'),
  modal: z.literal(false),
  name,
  type: name,
  /** Full image reference (image://…); absent means the cloud's default, DEFAULT_IMAGE. */
  image: ruled(checkImageRef, `${DEFAULT_IMAGE}-like image reference`).optional(),
  preemptible: z.boolean(),
  ephemeral: z.boolean(),
  /** Filesystem names or ids, each once. */
  filesystems: z.array(name),
  tags,
});
export const createSchema = z.discriminatedUnion('modal', [modal('create'), createArgsSchema]);

export const keysAddSchema = z.discriminatedUnion('modal', [
  modal('keys.add'),
  z.object({
    kind: z.literal('keys.add'),
    modal: z.literal(false),
    name,
    /** Normalised `<type> <base64> [comment]`. */
    publicKey: ruled(checkSshPublicKey, 'an OpenSSH public key'),
  }),
]);

export const fsCreateSchema = z.object({
  kind: z.literal('fs.create'),
  name,
  size: ruled(checkSize, SIZE_RULE),
});

export const k8sCreateSchema = z.discriminatedUnion('modal', [
  modal('k8s.create'),
  z.object({ kind: z.literal('k8s.create'), modal: z.literal(false), name, version: k8sVersion }),
]);
const poolAdd = <K extends 'k8s.pool.add' | 'slurm.pool.add'>(kind: K) =>
  z.discriminatedUnion('modal', [
    z.object({ kind: z.literal(kind), modal: z.literal(true), cluster: name }),
    z.object({
      kind: z.literal(kind),
      modal: z.literal(false),
      cluster: name,
      name,
      type: name,
      count: count(MAX_COUNT),
    }),
  ]);

/** `k8s register` is typed without arguments; its form fills these in (the kubeconfig travels sealed). */
export const k8sRegisterSchema = z.discriminatedUnion('modal', [
  modal('k8s.register'),
  z.object({
    kind: z.literal('k8s.register'),
    modal: z.literal(false),
    name,
    labels: z.record(ruled(checkLabelKey, LABEL_KEY_RULE), ruled(checkLabelValue, LABEL_VALUE_RULE)),
  }),
]);

export const slurmCreateSchema = z.discriminatedUnion('modal', [
  modal('slurm.create'),
  z.object({ kind: z.literal('slurm.create'), modal: z.literal(false), name }),
]);

const range = z.number().int().min(MIN_RANGE_SECONDS).max(MAX_RANGE_SECONDS);

export const gpuCommandSchema = z.discriminatedUnion('kind', [
  helpSchema,
  simple('projects'),
  simple('project'),
  projectUseSchema,
  simple('ls'),
  onName('show', 'instance'),
  createSchema,
  onName('start', 'instance'),
  onName('stop', 'instance'),
  onName('rm', 'instance'),
  simple('capacity'),
  simple('configs'),
  simple('keys'),
  keysAddSchema,
  onName('keys.rm', 'name'),
  simple('fs'),
  fsCreateSchema,
  onName('fs.rm', 'name'),
  simple('k8s.ls'),
  onName('k8s.show', 'cluster'),
  k8sCreateSchema,
  k8sRegisterSchema,
  onName('k8s.rm', 'cluster'),
  z.object({ kind: z.literal('k8s.upgrade'), cluster: name, version: k8sVersion }),
  z.object({ kind: z.literal('k8s.label'), cluster: name, labels }),
  onName('k8s.pools', 'cluster'),
  poolAdd('k8s.pool.add'),
  z.object({ kind: z.literal('k8s.pool.rm'), cluster: name, pool: name }),
  onName('k8s.kubeconfig', 'cluster'),
  simple('slurm.ls'),
  onName('slurm.show', 'cluster'),
  slurmCreateSchema,
  onName('slurm.rm', 'cluster'),
  onName('slurm.pools', 'cluster'),
  poolAdd('slurm.pool.add'),
  z.object({ kind: z.literal('slurm.pool.rm'), cluster: name, pool: name }),
  onName('slurm.users', 'cluster'),
  z.object({
    kind: z.literal('slurm.adduser'),
    cluster: name,
    sudo: z.boolean(),
    username: username.optional(),
    /** `--form`: open the form (prefilled with the other flags) instead of adding at once. */
    modal: z.boolean().optional(),
  }),
  z.object({ kind: z.literal('slurm.rmuser'), cluster: name, user: username }),
  z.object({ kind: z.literal('slurm.sudo'), cluster: name, user: username, sudo: z.boolean() }),
  z.object({ kind: z.literal('metrics'), instance: name, rangeSeconds: range }),
  z.object({
    kind: z.literal('metrics.query'),
    promql: ruled(checkPromql, PROMQL_RULE),
    rangeSeconds: range,
  }),
  z.object({ kind: z.literal('watch'), state: z.enum(['on', 'off']).optional() }),
  simple('jobs'),
  simple('approvals'),
  simple('waitlist'),
  z.object({ kind: z.literal('waitlist.add'), type: name, count: count(MAX_WAITLIST_COUNT) }),
  onName('waitlist.rm', 'id'),
  z.object({ kind: z.literal('audit'), limit: count(MAX_AUDIT) }),
]);

export type GpuCommand = z.infer<typeof gpuCommandSchema>;
/** The command of one kind, e.g. CommandOf<'k8s.pool.add'>. */
export type CommandOf<K extends GpuCommandKind> = Extract<GpuCommand, { kind: K }>;
