import { homeOpenedBy, noteRunning } from '../store/home-state.js';
import { instanceOwners } from '../store/instance-owners.js';
import type { ProjectSnapshot } from '../store/watch-snapshots.js';
import type { ResourceChange } from './diff-snapshot.js';
import type { WatchDeps } from './watch-deps.js';
import { addWatchJob } from './watch-queue.js';

// After a look that changed someone's machines: note since when machines run (the Home tab's uptime),
// and re-publish the Home tab of each owner who has opened it. The publish waits HOME_DEBOUNCE_MS
// under one job id per person, so a burst of changes (a fleet starting) publishes each Home once.

export const HOME_DEBOUNCE_MS = 2_000;

export async function refreshHomes(
  deps: WatchDeps,
  changes: readonly ResourceChange[],
  next: ProjectSnapshot,
  baseline: boolean,
): Promise<number> {
  const instances = baseline
    ? Object.values(next.resources).filter((r) => r.kind === 'instance')
    : changes.filter((c) => c.resource.kind === 'instance' && c.type !== 'gone').map((c) => c.resource);
  await noteRunning(
    deps.store,
    instances.map((r) => ({ id: r.id, running: r.fields.state === 'running' })),
    next.polledAt,
  );
  if (!deps.home || baseline) return 0;
  const touched = changes.filter((c) => c.resource.kind === 'instance').map((c) => c.resource.id);
  const owners = [...new Set((await instanceOwners(deps.store, touched)).filter((o) => o !== undefined))];
  const opened = await homeOpenedBy(deps.store, owners);
  const users = owners.filter((_, i) => opened[i] !== undefined);
  for (const userId of users) {
    await addWatchJob(deps.queue, { v: 1, job: 'home', userId }, `home-${userId}`, {
      delayMs: HOME_DEBOUNCE_MS,
    });
  }
  return users.length;
}
