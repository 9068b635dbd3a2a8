import type { z } from 'zod';
import type { Operation } from '../cloud/routes.js';
import type { CostEstimate, PriceBook } from '../pricing/cost.js';
import type { ArgReader } from './arg-reader.js';
import type { FormSpec } from './forms/form-kit.js';

// What one /gpu subcommand is, said once: its words, arguments and schema, its help, how it is
// answered, what the policy calls it, which cloud operations it needs, what it costs and its form.
// The registry (registry.ts) derives every table the rest of gpuops used to keep by hand.

/** Every subcommand belongs to one class; the policy sets a minimum role per class. */
export const OPERATION_CLASSES = ['read', 'operate', 'create', 'destroy', 'admin'] as const;
export type OperationClass = (typeof OPERATION_CLASSES)[number];

/**
 * How a subcommand is answered. `direct`: by the listener itself, from the store. Every other one
 * becomes a job: `ephemeral` answers the requester alone, `channel` posts a message everyone sees and
 * edits it as the job moves, `dm` sends its result to the requester in a direct message.
 */
export type Delivery = 'direct' | 'ephemeral' | 'channel' | 'dm';
export type JobDelivery = Exclude<Delivery, 'direct'>;

/** The sections of `/gpu help` and docs/commands.md, in order. */
export const GROUPS = [
  { key: 'basics', title: 'Help and projects' },
  { key: 'instances', title: 'Instances' },
  { key: 'catalog', title: 'Capacity, prices and SSH keys' },
  { key: 'fs', title: 'Filesystems' },
  { key: 'k8s', title: 'Kubernetes' },
  { key: 'slurm', title: 'Slurm' },
  { key: 'observe', title: 'Metrics, jobs and the team' },
] as const;
export type GroupKey = (typeof GROUPS)[number]['key'];

/** One cloud operation, or any one of several (an array) when either can serve the command. */
export type Requirement = Operation | readonly Operation[];

/** A requirement that depends on the arguments (a name to look up, an option). */
export interface Need {
  readonly requirement: Requirement;
  /** Shown after the reason, when there is something the person can do instead. */
  readonly hint?: string;
  /** The words of the command shown in the message, when an option (not the command) is the problem. */
  readonly path?: string;
}

/**
 * A name in a command's arguments that must already exist (an instance, a filesystem, a Kubernetes or
 * Slurm cluster, an SSH key on the account, a schedule) or be sold (an instance type). The request
 * pipeline checks it privately before anything is queued or posted, so a typo is answered to the
 * requester alone, with the nearest name that does exist.
 */
export interface Reference {
  readonly what: 'instance' | 'filesystem' | 'k8s cluster' | 'slurm cluster' | 'key' | 'schedule' | 'type';
  readonly ref: string;
}

export interface CommandCost {
  readonly estimate: CostEstimate;
  /**
   * True when the operation starts new spending (create, start, pool add): this is the figure to
   * compare with the approval threshold. False for stop, whose estimate is what it keeps costing.
   */
  readonly adds: boolean;
  /** A few words for the card: `while it runs`, `while it stays stopped`. */
  readonly label: string;
}

export interface CostInput {
  readonly prices: PriceBook;
  /** The type of the instance the command acts on, for start and stop (from a cached listing). */
  readonly targetType?: string;
  /**
   * For a command that schedules starts (`actsAs: 'start'`): the stop schedules on the same target in
   * its channel, so the month it can cost counts the hours between a start and the next stop.
   */
  readonly stopSchedules?: readonly ScheduledStop[];
}

export interface ScheduledStop {
  readonly id: string;
  /** As typed: `weekdays 20:00`. */
  readonly when: string;
  readonly pattern: string;
  readonly tz: string;
}

/**
 * What a command does to the fleet of machines, declared once by its spec (`effects`). gpuops derives
 * from it, for every command alike: the machine checked to exist before the request is queued (and
 * whose type prices it), the type checked to be sold, the price per hour it adds, whether it is leased,
 * the type remembered for a machine it makes, and the run rate it adds to a budget. Nothing outside a
 * family folder looks at a command's kind or guesses from its field names.
 */
export interface Effects {
  /** The existing machine it names, by name or id, and what it does to it. */
  readonly target?: {
    readonly instance: string;
    /**
     * `starts`: its running price is added (and it is leased); `stops`: it costs its stopped price from
     * then on; `destroys`: it costs nothing after. Absent: it reads or changes the machine's spending not.
     */
    readonly does?: 'starts' | 'stops' | 'destroys';
  };
  /** Every instance carrying this tag when it acts (a schedule's target): known only then. */
  readonly tag?: { readonly key: string; readonly value: string };
  /**
   * New machines it makes run: `count` of `type` (absent: the target's type, as a clone copies it).
   * `instance` names the one machine it makes, which is leased and whose type is remembered; a node
   * pool's nodes have no name of their own.
   */
  readonly launches?: { readonly type?: string; readonly count: number; readonly instance?: string };
  /** How long the price lasts, in a few words for the approval card (default `while it runs`). */
  readonly costLasts?: string;
}

/** What a form prefills from the command that opened it. */
export interface FormPrefill {
  readonly cluster?: string;
  readonly username?: string;
  readonly sudo?: boolean;
}

export interface CommandForm<C> {
  readonly spec: FormSpec;
  readonly prefill?: (command: C) => FormPrefill;
}

export interface CommandSpec<
  K extends string = string,
  C extends { readonly kind: K } = { readonly kind: K },
  D extends Delivery = Delivery,
> {
  readonly kind: K;
  readonly group: GroupKey;
  /** The words typed after `/gpu`, when they are not the kind's own (`waitlist.add` is `waitlist …`). */
  readonly words?: string;
  readonly usage: string;
  readonly summary: string;
  readonly example: string;
  readonly schema: z.ZodType<C>;
  /**
   * Reads the arguments after the command's words. Absent for a kind that a sibling's parser
   * produces (`/gpu waitlist` reads both the list and the add).
   */
  readonly parse?: (reader: ArgReader) => { readonly kind: string };
  /**
   * The words after it are its arguments even where subcommands share its first word
   * (`/gpu metrics <instance>` beside `/gpu metrics query`); otherwise an unknown word there is a typo.
   */
  readonly freeWords?: boolean;
  readonly delivery: D;
  readonly operationClass: OperationClass;
  /** Cloud operations it needs whatever its arguments; availability per shape is derived from these. */
  readonly needs: readonly Requirement[];
  /** Further operations its arguments call for (a name to resolve, an option). */
  readonly needsFor?: (command: C) => readonly Need[];
  /**
   * For commands that create something: what it is and the operations that list and delete it, so
   * that a cloud which can create but not list or delete it is named before the request runs.
   */
  readonly creates?: {
    readonly what: string;
    readonly list: Operation;
    readonly remove: Operation;
  };
  /** What it does to the fleet (`Effects`): references, price, lease and run rate follow from it. */
  readonly effects?: (command: C) => Effects;
  /**
   * The existing things its arguments name (`Reference`) besides those its effects name (the target
   * machine, a launched type), which are checked without being listed here.
   */
  readonly refers?: (command: C) => readonly Reference[];
  /**
   * What it costs, where the price its effects give is not the whole story (a scheduled start's month);
   * without it the price follows from `effects`.
   */
  readonly cost?: (command: C, input: CostInput) => CommandCost | undefined;
  /**
   * `always`: it waits for an approver by default whatever it costs (the policy's `approvals.always`
   * can change that). Destroying kinds always do; this marks the others.
   */
  readonly approval?: 'always';
  /**
   * The kind it makes happen later (`schedule.stop` → `stop`): whoever asks for it needs that kind's
   * role too, so a schedule never does what its owner may not do now.
   */
  readonly actsAs?: string;
  /**
   * The request as a person would type it, where the one derived from the usage line and example
   * (its words and the values its `<placeholders>` hold: registry.ts, describeCommand) is not.
   */
  readonly describe?: (command: C) => string;
  /** A paragraph for docs/commands.md under the section's table (Markdown). */
  readonly notes?: string;
  /** The form it opens when typed without arguments (`modal: true`). */
  readonly form?: CommandForm<C>;
}

/** Declares a spec that becomes a job, with its kind and command type inferred from the schema. */
export function defineCommand<const K extends string, S extends z.ZodType<{ readonly kind: K }>>(
  spec: CommandSpec<K, z.infer<S>, JobDelivery> & { readonly kind: K; readonly schema: S },
): CommandSpec<K, z.infer<S>, JobDelivery> & { readonly schema: S } {
  return spec;
}

/** Declares a spec the listener answers itself (`delivery: 'direct'`). */
export function defineDirectCommand<const K extends string, S extends z.ZodType<{ readonly kind: K }>>(
  spec: CommandSpec<K, z.infer<S>, 'direct'> & { readonly kind: K; readonly schema: S },
): CommandSpec<K, z.infer<S>, 'direct'> & { readonly schema: S } {
  return spec;
}
