import { z } from 'zod';
import { specs as approvals, synonyms as approvalsSynonyms } from './approvals/specs.js';
import { specs as audit } from './audit/specs.js';
import { specs as budgets, synonyms as budgetsSynonyms } from './budgets/specs.js';
import { specs as catalog, synonyms as catalogSynonyms } from './catalog/specs.js';
import { addsRunning, changedMachine, changesSpending, costOfEffects, effectReferences } from './effects.js';
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
  type Effects,
  type FormPrefill,
  GROUPS,
  type GroupKey,
  type Need,
  type OperationClass,
  type Reference,
} from './spec.js';
import { typedFields } from './typed-fields.js';
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

/**
 * Every kind: the built-in ones in registry order, then those addSpecs added. The lists derived from
 * the specs below are kept up to date in place as specs are added, so help, the parser and the
 * availability checks see an added family too.
 */
export const GPU_COMMAND_KINDS: readonly GpuCommandKind[] = [];

const BUILT_IN_SCHEMA = z.discriminatedUnion(
  'kind',
  COMMANDS.map((s) => s.schema) as unknown as [AnySpec['schema'], ...AnySpec['schema'][]],
);

// The specs seen without their per-kind command types, for the derived tables below.
type LooseSpec = CommandSpec<GpuCommandKind, { readonly kind: GpuCommandKind }>;
const BY_KIND = new Map<string, LooseSpec>((COMMANDS as readonly LooseSpec[]).map((s) => [s.kind, s]));
/** Specs added at run time by addSpecs, each checked by its own schema. */
const ADDED = new Map<string, LooseSpec>();
/** Every spec: the built-in ones, then the added ones in the order they came. */
const ALL: LooseSpec[] = [...(COMMANDS as readonly LooseSpec[])];
let revision = 0;

/**
 * The schema of every command: job payloads and forms are checked against it too. A kind added with
 * addSpecs is checked by its own spec's schema; every other one by the union of the built-in specs.
 */
export const gpuCommandSchema = z.unknown().transform((value, ctx) => {
  const kind = (value as { kind?: unknown } | null)?.kind;
  const added = typeof kind === 'string' ? ADDED.get(kind) : undefined;
  const checked = (added?.schema ?? BUILT_IN_SCHEMA).safeParse(value);
  if (checked.success) return checked.data;
  for (const issue of checked.error.issues) ctx.issues.push({ ...issue, input: undefined });
  return z.NEVER;
}) as unknown as z.ZodType<GpuCommand>;

/** A spec made with defineCommand, whatever its command type (its functions take that type only). */
export type AddedSpec = { readonly kind: string; readonly schema: z.ZodType } & Omit<
  CommandSpec<string, never>,
  'kind' | 'schema'
>;

/**
 * Adds a family's specs beside the built-in ones (the registry's extension point; the tests add a
 * throwaway family through it). Everything derived from specs follows, as for a built-in family: the
 * words typed and their suggestions, help, access class, availability, effects, price, references,
 * description, the job payload's check. A kind or words that exist already are a programming error.
 */
export function addSpecs(specs: readonly AddedSpec[]): void {
  for (const spec of specs) {
    if (BY_KIND.has(spec.kind)) throw new Error(`the /gpu subcommand ${spec.kind} exists already`);
    const words = spec.words ?? spec.kind.replaceAll('.', ' ');
    if (spec.parse && ALL.some((s) => s.parse && commandPath(s.kind) === words)) {
      throw new Error(`the words /gpu ${words} are another subcommand's already`);
    }
    BY_KIND.set(spec.kind, spec as unknown as LooseSpec);
    ADDED.set(spec.kind, spec as unknown as LooseSpec);
    ALL.push(spec as unknown as LooseSpec);
  }
  refreshDerived();
}

/** Every spec, added ones included, in registry order (help order is SPECS_IN_HELP_ORDER). */
export function allSpecs(): readonly LooseSpec[] {
  return ALL;
}

/** Changes each time specs are added, so a table built from them (the parser's) knows to rebuild. */
export function specsRevision(): number {
  return revision;
}

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
export const HELP_TOPICS: readonly string[] = [];

/** The specs of one help section, in registry order. */
export function specsOfGroup(group: GroupKey): readonly LooseSpec[] {
  return ALL.filter((s) => s.group === group);
}

/** Every spec in the order help lists them (grouped by section). */
export const SPECS_IN_HELP_ORDER: readonly LooseSpec[] = [];

export function deliveryOf(kind: GpuCommandKind): Delivery {
  return specFor(kind).delivery;
}

export function operationClassOf(kind: GpuCommandKind): OperationClass {
  return specFor(kind).operationClass;
}

/** Kinds that wait for an approver by default: every destroying kind, and those whose spec says so. */
export const ALWAYS_APPROVED_KINDS: readonly GpuCommandKind[] = [];

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

/** What the command does to the fleet, as its spec declares it (nothing, for most commands). */
export function effectsOf(command: GpuCommand): Effects {
  return specFor(command.kind).effects?.(command) ?? {};
}

/** The existing machine the command acts on by name or id, where its effects name one. */
export function targetOf(command: GpuCommand): string | undefined {
  return effectsOf(command).target?.instance;
}

/** The one machine the command changes, by name, where its effects name one (effects.ts changedMachine). */
export function changedMachineOf(command: GpuCommand): string | undefined {
  return changedMachine(effectsOf(command));
}

/** True when its price is read before it is accepted: its spec prices it, or its effects change spending. */
export function isPriced(command: GpuCommand): boolean {
  return specFor(command.kind).cost !== undefined || changesSpending(effectsOf(command));
}

/** True when it makes machines run (a launch, a start): it adds run rate, and may be leased. */
export function addsRunRate(command: GpuCommand): boolean {
  return addsRunning(effectsOf(command));
}

/**
 * The cost of a /gpu command, or undefined for one that does not change spending on machines: its
 * spec's own `cost`, else what its effects give. A command acting on an existing instance does not
 * carry its type: pass it as `targetType` (from a cached listing); without it the estimate is unknown.
 */
export function estimateCommand(
  input: CostInput & { readonly command: GpuCommand },
): CommandCost | undefined {
  const { command, ...rest } = input;
  const own = specFor(command.kind).cost;
  return own ? own(command, rest) : costOfEffects(effectsOf(command), rest);
}

/**
 * The existing things a command names, checked before it is queued: those its effects give (the
 * machine it acts on, the type it launches), then its spec's own, each once.
 */
export function referencesOf(command: GpuCommand): readonly Reference[] {
  const all = [...effectReferences(effectsOf(command)), ...(specFor(command.kind).refers?.(command) ?? [])];
  return all.filter((r, i) => all.findIndex((o) => o.what === r.what && o.ref === r.ref) === i);
}

/** The fields of each kind typed as its arguments (`typedFields`), read once from its spec. */
const TYPED = new Map<string, readonly string[]>();

/**
 * The request as a person would type it, for messages and the job log (commands carry no secrets):
 * its spec's own `describe`, else its words and the values of the fields its usage's placeholders
 * hold (`typedFields`), and the page of a paged list. Flags and free text are left out.
 */
export function describeCommand(command: GpuCommand): string {
  const spec = specFor(command.kind);
  const own = spec.describe?.(command);
  if (own !== undefined) return own;
  const path = commandPath(command.kind);
  let fields = TYPED.get(command.kind);
  if (!fields) {
    const reader = spec.parse ?? ALL.find((s) => s.parse && commandPath(s.kind) === path)?.parse;
    fields = typedFields(spec, path, reader);
    TYPED.set(command.kind, fields);
  }
  const c = command as Record<string, unknown>;
  const values = fields.map((f) => c[f]).filter((v) => typeof v === 'string' || typeof v === 'number');
  // The paged-list kit's flag: the page buttons carry this text, and the listener parses it back.
  const page = typeof c.page === 'number' ? [`--page ${c.page}`] : [];
  return [`/gpu ${path}`, ...values.map(String), ...page].join(' ');
}

/** Kinds that open a form when typed without arguments: each form's kind is its command's. */
export type FormKind = GpuCommandKind;
export const FORM_KINDS: readonly FormKind[] = [];

/** Puts `items` in place of what `list` held: the exported lists keep their identity. */
function fill<T>(list: readonly T[], items: readonly T[]): void {
  (list as T[]).splice(0, list.length, ...items);
}

/** Derives the registry's lists from every spec, at load and each time specs are added. */
function refreshDerived(): void {
  const kinds = ALL.map((s) => s.kind);
  fill(GPU_COMMAND_KINDS, kinds);
  fill(HELP_TOPICS, [
    ...new Set(
      kinds.flatMap((kind) => {
        const words = commandPath(kind).split(' ');
        return words.map((_, i) => words.slice(0, i + 1).join(' '));
      }),
    ),
  ]);
  fill(
    SPECS_IN_HELP_ORDER,
    GROUPS.flatMap((g) => specsOfGroup(g.key)),
  );
  fill(
    ALWAYS_APPROVED_KINDS,
    kinds.filter((k) => operationClassOf(k) === 'destroy' || specFor(k).approval === 'always'),
  );
  fill(
    FORM_KINDS,
    kinds.filter((k) => specFor(k).form !== undefined),
  );
  revision++;
}
refreshDerived();

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
