import type { HomeMachine, HomeSpend, ProjectSpend, SpendDay } from '../commands/home/home-data.js';
import { periodsOf } from '../store/ledger-periods.js';
import { createSnapshotStore, type LedgerDay } from '../store/watch-snapshots.js';
import type { HomeDeps, ProjectView } from './home-deps.js';

// This week's spend from the watchers' ledger (store/watch-snapshots.ts): per project and day, the
// estimated dollars and GPU-hours of every running machine, and GPU-hours per instance. A person's
// share is the GPU-hours of their machines priced at their type's running price.

const DAY_MS = 86_400_000;

/** The days of this week so far in `tz`, Monday first, as the ledger names them. */
export function weekDays(now: number, tz: string): Array<{ day: string; at: number }> {
  const days: Array<{ day: string; at: number }> = [];
  for (let k = 0; k < 7; k++) {
    const { day } = periodsOf(now - k * DAY_MS, tz);
    const at = Date.parse(`${day}T00:00:00Z`);
    days.unshift({ day, at });
    if (new Date(at).getUTCDay() === 1) break;
  }
  return days;
}

export async function gatherSpend(
  deps: HomeDeps,
  machines: readonly HomeMachine[],
  projects: ReadonlyMap<string, ProjectView>,
  now: number,
): Promise<HomeSpend> {
  const ledger = createSnapshotStore(deps.store);
  const week = weekDays(now, deps.policy.digest.tz);
  const ids = [...projects.keys()];
  const read: LedgerDay[][] = await Promise.all(
    ids.map((p) => Promise.all(week.map((d) => ledger.ledgerDay(p, d.day)))),
  );
  let unpriced = false;
  const days: SpendDay[] = week.map(({ day, at }, i) => {
    let userUsd = 0;
    let userGpuHours = 0;
    let projectUsd = 0;
    let projectGpuHours = 0;
    for (const [j, projectId] of ids.entries()) {
      const entry = read[j]![i]!;
      projectUsd += entry.usd;
      projectGpuHours += entry.gpuHours;
      for (const m of machines) {
        if (m.projectId !== projectId) continue;
        const h = entry.instances[m.id] ?? 0;
        if (h === 0) continue;
        userGpuHours += h;
        if (m.cost?.known && m.cost.gpusPerMachine > 0)
          userUsd += (h / m.cost.gpusPerMachine) * m.cost.perHour;
        else unpriced = true;
      }
    }
    return { day, at, userUsd, userGpuHours, projectUsd, projectGpuHours };
  });
  const spendOf: ProjectSpend[] = ids.map((projectId, j) => ({
    projectId,
    name: projects.get(projectId)?.name,
    usd: read[j]!.reduce((a, d) => a + d.usd, 0),
    gpuHours: read[j]!.reduce((a, d) => a + d.gpuHours, 0),
  }));
  return { days, projects: spendOf, unpriced };
}
