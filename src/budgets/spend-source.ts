import type { Policy } from '../policy/policy.js';
import { estimateMachines, type PriceBook } from '../pricing/cost.js';
import { instanceOwners } from '../store/instance-owners.js';
import { countedProjects } from '../store/spend-projects.js';
import type { Store } from '../store/store.js';
import { ledgerKey, readLedgerDay } from '../store/watch-ledger.js';
import { watchedPrices } from '../store/watch-prices.js';
import { createSnapshotStore, resourceList, watchedProjectsKey } from '../store/watch-snapshots.js';
import type { RunningMachine, SpendQuery, SpendRow, SpendSource } from './spend-model.js';

// Spend as budgets read it, from the watchers' ledger in Redis: one row per machine and day (its running
// hours and dollars as the looks counted them, its type and name as seen when its interval opened, its
// owner through gpuops), and the machines running at the last look with what they cost an hour.

export interface SpendSourceDeps {
  readonly store: Store;
  /** The pricing section prices running machines with the cached price list. */
  readonly policy: Pick<Policy, 'pricing'>;
}

/** Every calendar day from `from` to `to` inclusive (`YYYY-MM-DD`); empty when `to` is before `from`. */
export function daysBetween(from: string, to: string): string[] {
  const out: string[] = [];
  const end = Date.parse(`${to}T00:00:00Z`);
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= end; t += 86_400_000) {
    out.push(new Date(t).toISOString().slice(0, 10));
  }
  return out;
}

export function createSpendSource(deps: SpendSourceDeps): SpendSource {
  const { store } = deps;
  const projectsOr = async (projects: readonly string[] | undefined): Promise<string[]> => {
    if (projects) return [...projects];
    const [polled, counted] = await Promise.all([
      store.redis.smembers(watchedProjectsKey(store.prefix)),
      countedProjects(store),
    ]);
    return [...new Set([...polled, ...counted])].sort();
  };

  return {
    async rows(query: SpendQuery): Promise<readonly SpendRow[]> {
      const days = daysBetween(query.from, query.to);
      const projects = await projectsOr(query.projects);
      if (days.length === 0 || projects.length === 0) return [];
      const pipe = store.redis.pipeline();
      const cells: Array<{ project: string; day: string }> = [];
      for (const project of projects) {
        for (const day of days) {
          cells.push({ project, day });
          pipe.hgetall(ledgerKey(store.prefix, project, day));
        }
      }
      const answers = (await pipe.exec()) ?? [];
      const rows: Array<Omit<SpendRow, 'owner'>> = [];
      answers.forEach(([err, hash], i) => {
        if (err) throw err;
        const { project, day } = cells[i]!;
        const ledger = readLedgerDay(hash as Record<string, string>);
        for (const [instance, m] of Object.entries(ledger.machines)) {
          rows.push({
            day,
            project,
            instance,
            ...(m.name ? { name: m.name } : {}),
            type: m.type,
            hours: m.hours,
            usd: m.usd,
          });
        }
      });
      const ids = [...new Set(rows.map((r) => r.instance))];
      const owners = new Map(ids.map((id, i) => [id, i]));
      const found = await instanceOwners(store, ids);
      return rows.map((r) => {
        const owner = found[owners.get(r.instance)!];
        return owner ? { ...r, owner } : r;
      });
    },

    async running(projects?: readonly string[]): Promise<readonly RunningMachine[]> {
      const snapshots = createSnapshotStore(store);
      const out: Array<Omit<RunningMachine, 'owner'>> = [];
      for (const project of await projectsOr(projects)) {
        const { snapshot } = await snapshots.read(project);
        if (!snapshot) continue;
        const prices: PriceBook = {
          configurations: await watchedPrices(store, project).catch(() => undefined),
          pricing: deps.policy.pricing,
        };
        const perType = new Map<string, number>();
        for (const r of resourceList(snapshot.resources)) {
          if (r.kind !== 'instance' || r.fields.state !== 'running') continue;
          const type = r.fields.type ?? '';
          let usdPerHour = perType.get(type);
          if (usdPerHour === undefined) {
            const cost = estimateMachines({ prices, type, state: 'running' });
            usdPerHour = cost.known ? cost.perHour : 0;
            perType.set(type, usdPerHour);
          }
          out.push({ project, instance: r.id, ...(r.name ? { name: r.name } : {}), type, usdPerHour });
        }
      }
      const found = await instanceOwners(
        store,
        out.map((m) => m.instance),
      );
      return out.map((m, i) => (found[i] ? { ...m, owner: found[i] } : m));
    },
  };
}
