import type { GpuCommand, GpuCommandKind } from '../../command/command-schema.js';
import type { JobRun, Outcome } from '../job-run.js';
import {
  createInstance,
  deleteInstance,
  listInstances,
  showInstance,
  startInstance,
  stopInstance,
} from './instances.js';
import { listProjects, useProject } from './projects.js';

// One processor per subcommand that becomes a job. A kind missing here is answered with a clear
// "not handled by this version" rather than a crash.

type HandlerFor<K extends GpuCommandKind> = (
  run: JobRun,
  command: Extract<GpuCommand, { kind: K }>,
) => Promise<Outcome>;
export type HandlerTable = { [K in GpuCommandKind]?: HandlerFor<K> };

export const HANDLERS: HandlerTable = {
  projects: listProjects,
  'project.use': useProject,
  ls: listInstances,
  show: showInstance,
  start: startInstance,
  stop: stopInstance,
  rm: deleteInstance,
  create: (run, command) => {
    if (command.modal) throw new Error('a create from the modal arrives with its fields filled in');
    return createInstance(run, command);
  },
};

export function handlerFor(
  kind: GpuCommandKind,
): ((run: JobRun, command: GpuCommand) => Promise<Outcome>) | undefined {
  return HANDLERS[kind] as ((run: JobRun, command: GpuCommand) => Promise<Outcome>) | undefined;
}
