import type { CommandOf, JobKind } from '../registry.js';
import type { JobRun, Outcome } from './job-run.js';

/** The job processor of one kind: it gets the run (deps, project, message) and the typed command. */
export type HandlerFor<K extends JobKind> = (run: JobRun, command: CommandOf<K>) => Promise<Outcome>;

/** Handlers of some kinds, as a family exports them. */
export type Handlers = { readonly [K in JobKind]?: HandlerFor<K> };
