import type { Leases } from '../store/leases.js';
import { allSchedules } from '../store/schedules.js';
import type { Store } from '../store/store.js';
import type { PowerPlans } from './forecast.js';
import type { RunningMachine } from './spend-model.js';

// What the forecast needs to know about the stops to come, read from Redis: every power schedule, and
// the leases of the running machines (a lease names its machine as its owner typed it, name or id).

export interface PowerPlanDeps {
  readonly store: Pick<Store, 'redis' | 'prefix'>;
  readonly leases: Pick<Leases, 'activeFor'>;
  /**
   * The running machines a tag schedule acts on (the watcher does not keep tags): absent, tag
   * schedules do not lower the forecast.
   */
  readonly tagged?: (
    projectId: string,
    tag: { readonly key: string; readonly value: string },
  ) => Promise<ReadonlySet<string>>;
}

export async function readPowerPlans(
  deps: PowerPlanDeps,
  running: readonly RunningMachine[],
): Promise<PowerPlans> {
  const schedules = (await allSchedules(deps.store)).filter((s) => !s.paused);
  const owners = [...new Set(running.flatMap((m) => (m.owner ? [m.owner] : [])))];
  const leases = (await Promise.all(owners.map((o) => deps.leases.activeFor(o)))).flat();
  const leaseEnds = new Map<string, number>();
  for (const m of running) {
    const lease = leases.find(
      (l) =>
        l.owner === m.owner &&
        (l.instance === m.instance || l.instance === m.name) &&
        (l.projectId === undefined || l.projectId === m.project),
    );
    if (lease) leaseEnds.set(m.instance, lease.stopAt);
  }
  const tagged = new Map<string, ReadonlySet<string>>();
  if (deps.tagged) {
    for (const s of schedules) {
      if ('tag' in s.target) tagged.set(s.id, await deps.tagged(s.projectId, s.target.tag));
    }
  }
  return { schedules, leaseEnds, tagged };
}
