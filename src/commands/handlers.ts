import { handlers as budgets } from './budgets/handlers.js';
import { handlers as catalog } from './catalog/handlers.js';
import { handlers as filesystems } from './filesystems/handlers.js';
import { handlers as instances } from './instances/handlers.js';
import { handlers as k8s } from './k8s/handlers.js';
import { handlers as keys } from './keys/handlers.js';
import type { HandlerFor } from './kit/handler.js';
import type { JobRun, Outcome } from './kit/job-run.js';
import { handlers as metrics } from './metrics/handlers.js';
import { handlers as projects } from './projects/handlers.js';
import { type AddedSpec, addSpecs, type GpuCommand, type GpuCommandKind, type JobKind } from './registry.js';
import { handlers as schedules } from './schedules/handlers.js';
import { handlers as slurm } from './slurm/handlers.js';

// Every job handler, gathered from the families. The table's type lists every kind whose spec is not
// `direct`, so a command without a handler in its family does not compile.

export type HandlerTable = { readonly [K in JobKind]: HandlerFor<K> };

export const HANDLERS: HandlerTable = {
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
};

type AnyHandler = (run: JobRun, command: GpuCommand) => Promise<Outcome>;
const ADDED = new Map<string, AnyHandler>();

/**
 * A family beside the built-in ones, as one of its folders would give it (its specs and its
 * handlers): see addSpecs in registry.ts for what follows from its specs.
 */
export function addFamily<S extends AddedSpec>(family: {
  readonly specs: readonly S[];
  readonly handlers: { readonly [K in S['kind']]?: (run: JobRun, command: never) => Promise<Outcome> };
}): void {
  addSpecs(family.specs);
  for (const [kind, handler] of Object.entries(family.handlers)) {
    if (handler) ADDED.set(kind, handler as AnyHandler);
  }
}

export function handlerFor(kind: GpuCommandKind): AnyHandler | undefined {
  // Direct kinds have no handler: the listener answers them and never queues one.
  return (HANDLERS as Partial<Record<GpuCommandKind, AnyHandler>>)[kind] ?? ADDED.get(kind);
}
