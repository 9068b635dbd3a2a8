import { type CatalogConfiguration, catalogCacheName, catalogOf, entryOf } from './catalog-cache.js';
import { cacheKey, type Store } from './store.js';

// The price list the watchers price spend with, without parsing the whole catalogue at every look:
// the catalogue's cache entry also lists the project's instances (about 800 KB at 10,000), and its
// parse and schema check cost about 5 ms. The entry's bytes are compared with those last parsed (a
// copy and a compare, under a millisecond), and parsed again only when they differ.

interface KnownPrices {
  readonly raw: Buffer;
  readonly configurations: CatalogConfiguration[] | undefined;
}

/** Projects whose last price list a connection keeps (the least recently read goes first). */
const KEPT_PROJECTS = 64;

// By connection, then by the entry's key (which names the store's prefix and the project).
const knownByConnection = new WeakMap<object, Map<string, KnownPrices>>();

/** The cached price list of a project (the catalogue's configurations), undefined when none is cached. */
export async function watchedPrices(
  store: Store,
  projectId: string | undefined,
): Promise<CatalogConfiguration[] | undefined> {
  const key = cacheKey(store.prefix, catalogCacheName(projectId));
  const known = knownByConnection.get(store.redis) ?? new Map<string, KnownPrices>();
  knownByConnection.set(store.redis, known);
  const raw = await store.redis.getBuffer(key);
  if (raw === null) {
    known.delete(key);
    return undefined;
  }
  const mine = known.get(key);
  const configurations = mine?.raw.equals(raw)
    ? mine.configurations
    : catalogOf(entryOf(raw.toString('utf8')))?.catalog.configurations;
  known.delete(key);
  known.set(key, { raw, configurations });
  if (known.size > KEPT_PROJECTS) known.delete(known.keys().next().value!);
  return configurations;
}
