import { z } from 'zod';
import type { Configuration } from '../cloud/schemas.js';
import { ParsedByBytes } from './parsed-by-bytes.js';
import { cacheKey, type Store } from './store.js';

// What the forms show without calling the cloud: GPU configurations with prices, the instance types
// known for a project, and its filesystems. A scheduled job writes it; the listener only reads it, so a
// form opens inside Slack's three seconds. Validated on read, because the cache outlives deploys.

/** Refreshed this often by the `catalog.refresh` job scheduler. */
export const CATALOG_REFRESH_MS = 5 * 60_000;
/** Older than this, opening a form also asks for a refresh (the form still opens from the cache). */
export const CATALOG_STALE_MS = 2 * CATALOG_REFRESH_MS;
/** After a day without a refresh the cache is gone and forms open in their loading state. */
export const CATALOG_TTL_SECONDS = 24 * 3600;
/** A type seen once (in capacity or on an instance) stays listed this long. */
export const TYPE_MEMORY_MS = 30 * 24 * 3600_000;

export const catalogConfigurationSchema = z.object({
  gpuType: z.string(),
  gpuCounts: z.array(z.number().int()),
  /** Decimal strings, as the platform API gives them: never rounded. */
  pricePerGpuHour: z.string(),
  stoppedPricePerHour: z.string(),
  regions: z.array(z.string()),
  provisioningMinutes: z.number().int(),
});
export type CatalogConfiguration = z.infer<typeof catalogConfigurationSchema>;

export const catalogInstanceTypeSchema = z.object({
  name: z.string(),
  /** Machines available now (shape C's capacity listing); absent where the cloud has none. */
  capacity: z.number().int().optional(),
  /** Offered in some region by the price list at the last refresh (where capacity is not listed). */
  offered: z.boolean().optional(),
  /** Instances of this type in the project at the last refresh. */
  inUse: z.number().int().min(0),
  lastSeenAt: z.number(),
});
export type CatalogInstanceType = z.infer<typeof catalogInstanceTypeSchema>;

/** An instance of the project at the last refresh: what `/gpu start <name>` is priced by. */
export const catalogInstanceSchema = z.object({ id: z.string(), name: z.string(), type: z.string() });
export type CatalogInstance = z.infer<typeof catalogInstanceSchema>;

export const catalogFilesystemSchema = z.object({ id: z.string(), name: z.string(), size: z.string() });
export type CatalogFilesystem = z.infer<typeof catalogFilesystemSchema>;

/** A cluster of the project at the last refresh: what a cluster named in a request is checked against. */
export const catalogClusterSchema = z.object({ id: z.string(), name: z.string() });
export type CatalogCluster = z.infer<typeof catalogClusterSchema>;

export const catalogSchema = z.object({
  v: z.literal(1),
  refreshedAt: z.number(),
  /** Undefined when prices could never be loaded (no platform API configured, or it failed). */
  configurations: z.array(catalogConfigurationSchema).optional(),
  instanceTypes: z.array(catalogInstanceTypeSchema),
  /** Undefined where the shape cannot list filesystems. */
  filesystems: z.array(catalogFilesystemSchema).optional(),
  /** The project's instances (name, id, type); undefined until a listing succeeded. */
  instances: z.array(catalogInstanceSchema).optional(),
  /**
   * When `instances` was listed (a failed listing keeps the last list, and its time); a catalogue
   * written before this field was added was listed at its `refreshedAt`.
   */
  instancesListedAt: z.number().optional(),
  /** The project's Kubernetes and Slurm clusters; undefined where the shape cannot list them or never did. */
  k8sClusters: z.array(catalogClusterSchema).optional(),
  slurmClusters: z.array(catalogClusterSchema).optional(),
  /** The names of the account's SSH keys; undefined without the platform API or before a listing. */
  sshKeys: z.array(z.string()).optional(),
  /** What could not be refreshed last time, in words for the form. */
  problems: z.array(z.string()),
});
export type Catalog = z.infer<typeof catalogSchema>;

/** When the catalogue's instances were listed: what a deletion gpuops saw since outdates. */
export function instancesListedAt(catalog: Catalog): number {
  return catalog.instancesListedAt ?? catalog.refreshedAt;
}

/** The cached configurations as the platform API gives them, for the pricing functions. */
export function platformConfigurations(catalog: Catalog): Configuration[] {
  return (catalog.configurations ?? []).map((c) => ({
    gpu_type: c.gpuType,
    gpu_counts: c.gpuCounts,
    price_per_gpu_hr: c.pricePerGpuHour,
    stopped_price_per_hour: c.stoppedPricePerHour,
    regions: c.regions,
    estimated_provisioning_time_minutes: c.provisioningMinutes,
  }));
}

/** The catalogue's cache entry of a project (Store.cached). */
export const catalogCacheName = (projectId: string | undefined) => `catalog:${projectId ?? 'none'}`;

/** The Redis key of a project's catalogue. */
export const catalogKey = (store: Pick<Store, 'prefix'>, projectId: string | undefined) =>
  cacheKey(store.prefix, catalogCacheName(projectId));

/** The project's catalogue and when it was stored, or undefined when missing or unreadable. */
export async function readCatalog(
  store: Store,
  projectId: string | undefined,
): Promise<{ catalog: Catalog; storedAt: number } | undefined> {
  const key = catalogKey(store, projectId);
  return catalogInEntry(store, key, await store.redis.getBuffer(key));
}

// Every priced request reads the catalogue before it is acknowledged: it is parsed once per refresh
// (every few minutes) and shared by the reads until the next, for up to eight projects per
// connection. What is kept is frozen, since every reader shares it.
const parsedCatalogs = new ParsedByBytes<{ catalog: Catalog; storedAt: number } | undefined>(8);

/** The catalogue in the cache entry stored at `key`, as read (null when missing). */
export function catalogInEntry(
  store: Pick<Store, 'redis'>,
  key: string,
  bytes: Buffer | null,
): { catalog: Catalog; storedAt: number } | undefined {
  return parsedCatalogs.read(store.redis, key, bytes, (b) => frozen(catalogOf(entryOf(b.toString('utf8')))));
}

/** A cache entry as Store.putCache wrote it; undefined when it is not JSON. */
export function entryOf(text: string | null): { value: unknown; storedAt: number } | undefined {
  if (text === null) return undefined;
  try {
    return JSON.parse(text) as { value: unknown; storedAt: number };
  } catch {
    return undefined;
  }
}

function frozen<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  for (const inner of Object.values(value)) frozen(inner);
  return Object.freeze(value);
}

/** The catalogue in a cache entry read by the caller, if it is one. */
export function catalogOf(
  entry: { value: unknown; storedAt: number } | undefined,
): { catalog: Catalog; storedAt: number } | undefined {
  if (!entry) return undefined;
  const parsed = catalogSchema.safeParse(entry.value);
  return parsed.success ? { catalog: parsed.data, storedAt: entry.storedAt } : undefined;
}

export async function writeCatalog(
  store: Store,
  projectId: string | undefined,
  catalog: Catalog,
): Promise<void> {
  await store.putCache(catalogCacheName(projectId), catalogSchema.parse(catalog), CATALOG_TTL_SECONDS);
}

/**
 * Instance types in the order forms list them: available now (most capacity first), then types in
 * use in the project, then the others seen before; types not seen for a month are dropped.
 */
export function orderedTypes(types: readonly CatalogInstanceType[], now: number): CatalogInstanceType[] {
  const rank = (t: CatalogInstanceType) =>
    (t.capacity ?? 0) > 0 || t.offered === true ? 0 : t.inUse > 0 ? 1 : 2;
  return types
    .filter((t) => now - t.lastSeenAt <= TYPE_MEMORY_MS)
    .sort(
      (a, b) =>
        rank(a) - rank(b) ||
        (b.capacity ?? 0) - (a.capacity ?? 0) ||
        b.inUse - a.inUse ||
        a.name.localeCompare(b.name),
    );
}
