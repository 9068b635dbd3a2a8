import { type Catalog, catalogInEntry, catalogKey, entryOf, instancesListedAt } from './catalog-cache.js';
import { cacheKey, type Store } from './store.js';

// What gpuops itself last did to an instance, known without calling the cloud: the cached catalogue
// lists the project's instances at its last refresh, and a job that made or deleted a machine writes
// that down by the machine's name (and id) at once. A create remembers the machine's type, so
// `/gpu start <name>` right after it is priced too (unknown → priced "unknown"); a delete remembers
// when, so a request for the machine is answered "deleted" at once though the listing, made before,
// still names it. Whichever came last wins: a create under the same name replaces the deletion.

const REMEMBER_SECONDS = 30 * 86_400;

const cacheName = (projectId: string | undefined, name: string) => `itype:${projectId ?? 'none'}:${name}`;

export async function rememberInstanceType(
  store: Store,
  projectId: string | undefined,
  name: string,
  type: string,
): Promise<void> {
  await store.putCache(cacheName(projectId, name), type, REMEMBER_SECONDS);
}

/**
 * A job deleted the instance known by `refs` (its name, its id) at `at` (the clock the catalogue's
 * refresh times its listings by): until a listing made after it, requests for it are answered at once.
 */
export async function rememberDeleted(
  store: Store,
  projectId: string | undefined,
  refs: readonly string[],
  at: number,
): Promise<void> {
  await Promise.all(
    [...new Set(refs)].map((ref) =>
      store.putCache(cacheName(projectId, ref), { deletedAt: at }, REMEMBER_SECONDS),
    ),
  );
}

/** The type of the instance named (or with the id) `ref`, or undefined when not known here. */
export async function instanceTypeOf(
  store: Store,
  projectId: string | undefined,
  ref: string,
  catalog: Catalog | undefined,
): Promise<string | undefined> {
  return listedType(catalog, ref) ?? rememberedType(await store.cached<unknown>(cacheName(projectId, ref)));
}

function listedType(catalog: Catalog | undefined, ref: string): string | undefined {
  return catalog?.instances?.find((i) => i.name === ref || i.id === ref)?.type;
}

function rememberedType(entry: { value: unknown } | undefined): string | undefined {
  return typeof entry?.value === 'string' ? entry.value : undefined;
}

function deletedAt(entry: { value: unknown } | undefined): number | undefined {
  const value = entry?.value as { deletedAt?: unknown } | null | undefined;
  return typeof value?.deletedAt === 'number' ? value.deletedAt : undefined;
}

export interface CatalogAndType {
  readonly cached?: { catalog: Catalog; storedAt: number };
  readonly type?: string;
  /** A job of gpuops made it (its type is remembered): the listing may not name it yet. */
  readonly made?: boolean;
  /** A job of gpuops deleted it after the cached listing was made (or with none cached). */
  readonly gone?: boolean;
}

/** The cached catalogue and what is known of the instance `ref`, in one read (a request's price and check). */
export async function catalogAndTypeOf(
  store: Store,
  projectId: string | undefined,
  ref: string,
): Promise<CatalogAndType> {
  const key = catalogKey(store, projectId);
  const [catalogBytes, rememberedBytes] = await store.redis.mgetBuffer(
    key,
    cacheKey(store.prefix, cacheName(projectId, ref)),
  );
  const cached = catalogInEntry(store, key, catalogBytes ?? null);
  const remembered = entryOf(rememberedBytes?.toString('utf8') ?? null);
  const deleted = deletedAt(remembered);
  const gone = deleted !== undefined && (!cached || deleted >= instancesListedAt(cached.catalog));
  const made = rememberedType(remembered);
  const type = gone ? undefined : (listedType(cached?.catalog, ref) ?? made);
  return {
    ...(cached ? { cached } : {}),
    ...(type ? { type } : {}),
    ...(made ? { made: true } : {}),
    ...(gone ? { gone: true } : {}),
  };
}
