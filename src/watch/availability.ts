import { type OfferedType, readAvailability } from '../pricing/offered-types.js';
import type { WatchDeps } from './watch-deps.js';

// What the waitlist and the digest read: one listing per project of what can be ordered, from the
// capacity listing where the cloud has one, else the platform API's price list (src/pricing).

export interface ProjectAvailability {
  readonly source: 'capacity' | 'price-list';
  readonly types: ReadonlyMap<string, OfferedType>;
}

/** Undefined when the deployment has neither a capacity listing nor the platform API. */
export async function availabilityOf(
  deps: Pick<WatchDeps, 'cloud' | 'platform' | 'policy'>,
  projectId: string,
  signal: AbortSignal,
): Promise<ProjectAvailability | undefined> {
  const { cloud, platform } = deps;
  const listing = await readAvailability({
    ...(cloud.supports('listCapacity')
      ? { listCapacity: () => cloud.listCapacity({ projectId, signal }) }
      : {}),
    ...(platform ? { listConfigurations: () => platform.listConfigurations({ signal }) } : {}),
    ...(deps.policy.pricing.models.length > 0 ? { models: deps.policy.pricing.models } : {}),
  });
  if (!listing) return undefined;
  return { source: listing.source, types: new Map(listing.types.map((t) => [t.name, t])) };
}

/** Whether a waitlist entry's wish is met: that many free machines, or (price list) offered at all. */
export function satisfies(type: OfferedType | undefined, count: number): boolean {
  if (!type) return false;
  if (type.capacity !== undefined) return type.capacity >= count;
  return (type.price?.regions.length ?? 0) > 0;
}
