import type { CapacityEntry, Configuration } from '../cloud/index.js';
import { GPU_MODELS, type GpuModel, typeNamesFor } from './instance-types.js';
import { priceForType, type TypePrice } from './price-for-type.js';

// The instance types one can order, in every shape. Where the cloud lists capacity (shape C) that
// listing names the types and says how many machines are free; elsewhere (A, B) the platform API's
// price list says which GPU configurations are sold, in which regions and how soon, and the model
// table (instance-types.ts) names their types. Pure: the listings are read by the caller.

export type AvailabilitySource = 'capacity' | 'price-list';

export interface OfferedType {
  readonly name: string;
  /** The type's GPUs, price, regions and provisioning time, when the price list covers it. */
  readonly price?: TypePrice;
  /** Machines free now: only where the cloud lists capacity. */
  readonly capacity?: number;
}

export interface Availability {
  readonly source: AvailabilitySource;
  readonly types: readonly OfferedType[];
  /** False when prices could not be read (the capacity listing is still shown). */
  readonly pricesKnown: boolean;
  /** Why prices could not be read, when they were asked for and failed. */
  readonly pricesError?: unknown;
}

/** The one line under a price-list answer: where the figures come from and what they cannot tell. */
export const PRICE_LIST_NOTE =
  'From the price list of available GPU configurations: it says which types can be ordered, in which regions and how soon, not how many machines are free right now.';

/** Whether a type can be had now: free machines in a capacity listing, a region in the price list. */
export function isOffered(type: OfferedType): boolean {
  if (type.capacity !== undefined) return type.capacity > 0;
  return (type.price?.regions.length ?? 0) > 0;
}

/** The types a price list offers, one per GPU count of each configuration whose model has a stem. */
export function typesFromPriceList(
  configurations: readonly Configuration[],
  models: readonly GpuModel[] = GPU_MODELS,
): OfferedType[] {
  const types: OfferedType[] = [];
  for (const config of configurations) {
    for (const name of typeNamesFor(config.gpu_type, config.gpu_counts, models)) {
      const price = priceForType(name, configurations, models);
      types.push({ name, ...(price ? { price } : {}) });
    }
  }
  return types;
}

/** The capacity listing's types, priced where the price list covers them. */
export function typesFromCapacity(
  entries: readonly CapacityEntry[],
  configurations: readonly Configuration[] | undefined,
  models: readonly GpuModel[] = GPU_MODELS,
): OfferedType[] {
  return entries.map((e) => {
    const price = configurations ? priceForType(e.name, configurations, models) : undefined;
    return { name: e.name, capacity: e.capacity, ...(price ? { price } : {}) };
  });
}

/** Available first (most free machines, then cheapest), then the rest, by name within a tie. */
export function sortOffered(types: readonly OfferedType[]): OfferedType[] {
  const perHour = (t: OfferedType) => (t.price ? Number(t.price.pricePerHour) : Number.POSITIVE_INFINITY);
  return [...types].sort(
    (a, b) =>
      Number(isOffered(b)) - Number(isOffered(a)) ||
      (b.capacity ?? 0) - (a.capacity ?? 0) ||
      perHour(a) - perHour(b) ||
      a.name.localeCompare(b.name),
  );
}

export interface AvailabilityReaders {
  /** Present where the cloud lists capacity. */
  readonly listCapacity?: (() => Promise<CapacityEntry[]>) | undefined;
  /** Present where the platform API is configured. */
  readonly listConfigurations?: (() => Promise<Configuration[]>) | undefined;
  readonly models?: readonly GpuModel[];
}

/**
 * What can be ordered now, from the best source the deployment has: the capacity listing (prices
 * joined when they can be read), else the price list. Undefined when it has neither. A failing
 * capacity listing, or a failing price list where it is the source, throws.
 */
export async function readAvailability(readers: AvailabilityReaders): Promise<Availability | undefined> {
  const models = readers.models ?? GPU_MODELS;
  if (readers.listCapacity) {
    let pricesError: unknown;
    const [entries, configurations] = await Promise.all([
      readers.listCapacity(),
      readers.listConfigurations?.().catch((err: unknown) => {
        pricesError = err;
        return undefined;
      }),
    ]);
    return {
      source: 'capacity',
      types: sortOffered(typesFromCapacity(entries, configurations, models)),
      pricesKnown: configurations !== undefined,
      ...(pricesError !== undefined ? { pricesError } : {}),
    };
  }
  if (readers.listConfigurations) {
    const configurations = await readers.listConfigurations();
    return {
      source: 'price-list',
      types: sortOffered(typesFromPriceList(configurations, models)),
      pricesKnown: true,
    };
  }
  return undefined;
}
