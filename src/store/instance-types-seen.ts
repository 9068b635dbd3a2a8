import { type Catalog, catalogCacheName, catalogOf } from './catalog-cache.js';
import type { Store } from './store.js';

// The type of an instance, known without calling the cloud: the cached catalogue lists the project's
// instances at its last refresh, and a create job remembers the type of the machine it made, so
// `/gpu start <name>` right after a create is priced too. Unknown → the start is priced "unknown".

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

export interface CatalogAndType {
  readonly cached?: { catalog: Catalog; storedAt: number };
  readonly type?: string;
}

/** The cached catalogue and the type of the instance `ref`, in one read (a request's price). */
export async function catalogAndTypeOf(
  store: Store,
  projectId: string | undefined,
  ref: string,
): Promise<CatalogAndType> {
  const [entry, remembered] = await store.cachedMany([
    catalogCacheName(projectId),
    cacheName(projectId, ref),
  ]);
  const cached = catalogOf(entry);
  const type = listedType(cached?.catalog, ref) ?? rememberedType(remembered);
  return { ...(cached ? { cached } : {}), ...(type ? { type } : {}) };
}
