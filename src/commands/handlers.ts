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
import type { GpuCommand, GpuCommandKind, JobKind } from './registry.js';
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

export function handlerFor(
  kind: GpuCommandKind,
): ((run: JobRun, command: GpuCommand) => Promise<Outcome>) | undefined {
  // Direct kinds have no handler: the listener answers them and never queues one.
  return (
    HANDLERS as Partial<Record<GpuCommandKind, (run: JobRun, command: GpuCommand) => Promise<Outcome>>>
  )[kind];
}
