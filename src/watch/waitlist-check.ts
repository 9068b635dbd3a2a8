import { capacityAvailableMessage } from '../commands/waitlist/render.js';
import { readCatalog, writeCatalog } from '../store/catalog-cache.js';
import type { Store } from '../store/store.js';
import { createWaitlist, type WaitlistEntry } from '../store/waitlist.js';
import { createOutbox } from '../store/watch-outbox.js';
import { availabilityOf, type ProjectAvailability, satisfies } from './availability.js';
import { startDrains } from './drain-outbox.js';
import type { WatchDeps } from './watch-deps.js';

// The capacity waitlist check: one listing per project with waiting entries — the capacity listing
// where the cloud has one, else the price list (availability.ts) — and each entry whose wish is met
// (that many free machines; or, from the price list, the type offered in some region) is taken off
// the list and told to its channel — once, however many replicas check (taking an entry off is atomic).

export interface WaitlistOutcome {
  readonly waiting: number;
  readonly told: number;
  readonly failed: number;
}

/**
 * Writes a fresh capacity listing into the cached catalogue, so the create form the notice's button
 * opens shows the capacity that was just seen rather than an older figure.
 */
async function freshenCatalog(store: Store, projectId: string, listing: ProjectAvailability) {
  if (listing.source !== 'capacity') return;
  const capacity = new Map([...listing.types].map(([name, t]) => [name, t.capacity ?? 0]));
  const cached = await readCatalog(store, projectId);
  if (!cached) return;
  const now = Date.now();
  const known = new Set(cached.catalog.instanceTypes.map((t) => t.name));
  const instanceTypes = [
    ...cached.catalog.instanceTypes.map((t) =>
      capacity.has(t.name) ? { ...t, capacity: capacity.get(t.name)!, lastSeenAt: now } : t,
    ),
    ...[...capacity]
      .filter(([name]) => !known.has(name))
      .map(([name, c]) => ({ name, capacity: c, inUse: 0, lastSeenAt: now })),
  ];
  await writeCatalog(store, projectId, { ...cached.catalog, instanceTypes });
}

export async function checkWaitlist(deps: WatchDeps, signal: AbortSignal): Promise<WaitlistOutcome> {
  const waitlist = createWaitlist(deps.store);
  const entries = await waitlist.all();
  if (entries.length === 0) return { waiting: 0, told: 0, failed: 0 };
  const byProject = new Map<string, WaitlistEntry[]>();
  for (const e of entries) byProject.set(e.projectId, [...(byProject.get(e.projectId) ?? []), e]);
  const outbox = createOutbox(deps.store);
  let told = 0;
  let failed = 0;
  for (const [projectId, waiting] of byProject) {
    let listing: ProjectAvailability | undefined;
    try {
      listing = await availabilityOf(deps, projectId, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      failed++;
      deps.log.warn({ err, projectId }, 'could not list capacity for the waitlist; trying again next time');
      continue;
    }
    // Neither a capacity listing nor a price list: the entries wait (`/gpu waitlist` said so).
    if (!listing) return { waiting: entries.length, told, failed };
    let freshened = false;
    for (const entry of waiting) {
      const type = listing.types.get(entry.type);
      if (!satisfies(type, entry.count)) continue;
      if (!(await waitlist.take(entry))) continue;
      if (!freshened) {
        freshened = true;
        await freshenCatalog(deps.store, projectId, listing).catch((err: unknown) =>
          deps.log.warn({ err, projectId }, 'could not write the fresh capacity into the catalogue'),
        );
      }
      const { text, blocks } = capacityAvailableMessage({ entry, capacity: type?.capacity });
      const token = await outbox.push(entry.channelId, [{ op: 'message', mode: 'post', text, blocks }]);
      if (token) await startDrains(deps, [{ target: entry.channelId, token }]);
      told++;
    }
  }
  return { waiting: entries.length, told, failed };
}
