import { z } from 'zod';
import { specs as approvals, synonyms as approvalsSynonyms } from './approvals/specs.js';
import { specs as audit } from './audit/specs.js';
import { specs as budgets, synonyms as budgetsSynonyms } from './budgets/specs.js';
import { specs as catalog, synonyms as catalogSynonyms } from './catalog/specs.js';
import { specs as filesystems, synonyms as filesystemsSynonyms } from './filesystems/specs.js';
import type { FormSpec } from './forms/form-kit.js';
import { FormMetadataError } from './forms/modal-metadata.js';
import { specs as help } from './help/specs.js';
import { specs as instances, synonyms as instancesSynonyms } from './instances/specs.js';
import { specs as jobs, synonyms as jobsSynonyms } from './jobs/specs.js';
import { specs as k8s, synonyms as k8sSynonyms } from './k8s/specs.js';
import { specs as keys, synonyms as keysSynonyms } from './keys/specs.js';
import { specs as metrics, synonyms as metricsSynonyms } from './metrics/specs.js';
import { specs as projects, synonyms as projectsSynonyms } from './projects/specs.js';
import { specs as schedules, synonyms as schedulesSynonyms } from './schedules/specs.js';
import { specs as slurm, synonyms as slurmSynonyms } from './slurm/specs.js';
import {
  type CommandCost,
  type CommandSpec,
  type CostInput,
  type Delivery,
  type FormPrefill,
  GROUPS,
  type GroupKey,
  type Need,
  type OperationClass,
  type Reference,
} from './spec.js';
import { specs as waitlist } from './waitlist/specs.js';
import { specs as watch } from './watch/specs.js';

export { OPERATION_CLASSES, type OperationClass } from './spec.js';

// The list of command families, in the order help lists them, and everything derived from it: the
// command union, its schema, help topics, delivery, operation classes, needs, costs and forms.
// Adding a subcommand means adding a spec to its family; nothing here changes.

export const COMMANDS = [
  ...help,
  ...projects,
  ...instances,
  ...schedules,
  ...catalog,
  ...keys,
  ...filesystems,
  ...k8s,
  ...slurm,
  ...metrics,
  ...budgets,
  ...watch,
  ...jobs,
  ...approvals,
  ...waitlist,
  ...audit,
] as const;

/** Every family's synonyms, for "did you mean" (`delete` → `rm`, `kubernetes` → `k8s`). */
export const SYNONYMS: Readonly<Record<string, string>> = {
  ...projectsSynonyms,
  ...instancesSynonyms,
  ...schedulesSynonyms,
  ...catalogSynonyms,
  ...keysSynonyms,
  ...filesystemsSynonyms,
  ...k8sSynonyms,
  ...slurmSynonyms,
  ...metricsSynonyms,
  ...budgetsSynonyms,
  ...jobsSynonyms,
  ...approvalsSynonyms,
};

type AnySpec = (typeof COMMANDS)[number];
/** Every subcommand, named by its words joined with dots. */
export type GpuCommandKind = AnySpec['kind'];
/** The typed result of parsing `/gpu …`. */
export type GpuCommand = z.infer<AnySpec['schema']>;
/** Kinds that become jobs (every delivery but `direct`): each needs a handler. */
export type JobKind = Exclude<AnySpec, { readonly delivery: 'direct' }>['kind'];
/** Kinds the listener answers itself. */
export type DirectKind = Exclude<GpuCommandKind, JobKind>;
/** The command of one kind, e.g. `CommandOf<'ls'>`. */
export type CommandOf<K extends GpuCommandKind> = Extract<GpuCommand, { kind: K }>;

export const GPU_COMMAND_KINDS: readonly GpuCommandKind[] = COMMANDS.map((s) => s.kind);

/** The schema of every command: job payloads and forms are checked against it too. */
export const gpuCommandSchema = z.discriminatedUnion(
  'kind',
  COMMANDS.map((s) => s.schema) as unknown as [AnySpec['schema'], ...AnySpec['schema'][]],
) as unknown as z.ZodType<GpuCommand>;

// The specs seen without their per-kind command types, for the derived tables below.
type LooseSpec = CommandSpec<GpuCommandKind, { readonly kind: GpuCommandKind }>;
const BY_KIND: ReadonlyMap<string, LooseSpec> = new Map(
  (COMMANDS as readonly LooseSpec[]).map((s) => [s.kind, s]),
);

export function isCommandKind(kind: string): kind is GpuCommandKind {
  return BY_KIND.has(kind);
}

/** The spec of a kind; it throws only for a kind that is not a /gpu subcommand (a programming error). */
export function specFor(kind: string): LooseSpec {
  const spec = BY_KIND.get(kind);
  if (!spec) throw new Error(`no /gpu subcommand ${kind}`);
  return spec;
}

/** The words a user types for a kind; `waitlist.add` is typed as `/gpu waitlist <type>`. */
/** The usage line and example of a kind, for errors and forms. */
export const docFor = (kind: string): LooseSpec => specFor(kind);

export function commandPath(kind: string): string {
  return BY_KIND.get(kind)?.words ?? kind.replaceAll('.', ' ');
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

/** The specs of one help section, in registry order. */
export function specsOfGroup(group: GroupKey): readonly LooseSpec[] {
  return (COMMANDS as readonly LooseSpec[]).filter((s) => s.group === group);
}

/** Every spec in the order help lists them (grouped by section). */
export const SPECS_IN_HELP_ORDER: readonly LooseSpec[] = GROUPS.flatMap((g) => specsOfGroup(g.key));

export function deliveryOf(kind: GpuCommandKind): Delivery {
  return specFor(kind).delivery;
}

export function operationClassOf(kind: GpuCommandKind): OperationClass {
  return specFor(kind).operationClass;
}

/** Kinds that wait for an approver by default: every destroying kind, and those whose spec says so. */
export const ALWAYS_APPROVED_KINDS: readonly GpuCommandKind[] = GPU_COMMAND_KINDS.filter(
  (k) => operationClassOf(k) === 'destroy' || specFor(k).approval === 'always',
);

/** Kinds of one class, in registry order. */
export function kindsOfClass(cls: OperationClass): GpuCommandKind[] {
  return GPU_COMMAND_KINDS.filter((k) => operationClassOf(k) === cls);
}

/** Operations the command needs: its kind's, plus name lookups and options that need more. */
export function needsOf(command: GpuCommand): Need[] {
  const spec = specFor(command.kind);
  // `/gpu waitlist` alone lists; only adding to it needs the capacity listing.
  const path =
    spec.words !== undefined ? spec.usage.replace(/^\/gpu /, '').replace(/\s*\[.*$/, '') : undefined;
  return [
    ...spec.needs.map((requirement) => ({ requirement, ...(path ? { path } : {}) })),
    ...(spec.needsFor?.(command) ?? []),
  ];
}

/**
 * The cost of a /gpu command, or undefined for one that does not change spending on machines.
 * start and stop act on an existing instance whose type the command does not carry: pass it as
 * `targetType` (from a cached listing); without it the estimate is unknown.
 */
export function estimateCommand(
  input: CostInput & { readonly command: GpuCommand },
): CommandCost | undefined {
  const { command, ...rest } = input;
  return specFor(command.kind).cost?.(command, rest);
}

/** The existing things a command names, checked before it is queued: its spec's, else its instance. */
export function referencesOf(command: GpuCommand): readonly Reference[] {
  const own = specFor(command.kind).refers;
  if (own) return own(command);
  const instance = (command as { instance?: unknown }).instance;
  return typeof instance === 'string' ? [{ what: 'instance', ref: instance }] : [];
}

/** The request as a person would type it, for messages and the job log (commands carry no secrets). */
export function describeCommand(command: GpuCommand): string {
  const own = specFor(command.kind).describe?.(command);
  if (own !== undefined) return own;
  const c = command as Record<string, unknown>;
  const words = [`/gpu ${commandPath(command.kind)}`];
  for (const field of [
    'cluster',
    'instance',
    'name',
    'id',
    'project',
    'type',
    'version',
    'size',
    'pool',
    'user',
  ]) {
    const value = c[field];
    if (typeof value === 'string') words.push(value);
  }
  if (typeof c.count === 'number') words.push(String(c.count));
  if (typeof c.page === 'number') words.push(`--page ${c.page}`);
  return words.join(' ');
}

/** Kinds that open a form when typed without arguments: each form's kind is its command's. */
export type FormKind = GpuCommandKind;
export const FORM_KINDS: readonly FormKind[] = GPU_COMMAND_KINDS.filter((k) => specFor(k).form !== undefined);

/**
 * The form of a kind: what the listener opens, and what a submission or the catalogue job looks up.
 * A FormMetadataError for a kind with no form (a view opened by another version of gpuops).
 */
export function formSpecOf(kind: string): FormSpec {
  const form = BY_KIND.get(kind)?.form;
  if (!form) throw new FormMetadataError();
  return form.spec;
}

/** The form a command opens, with what it prefills; undefined when the command has its arguments. */
export function formFor(command: GpuCommand): { form: FormKind; prefill: FormPrefill } | undefined {
  if (!('modal' in command) || command.modal !== true) return undefined;
  const form = specFor(command.kind).form;
  if (!form) return undefined;
  return { form: command.kind, prefill: form.prefill?.(command) ?? {} };
}
