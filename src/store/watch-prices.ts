import { type CatalogConfiguration, catalogKey, catalogOf, entryOf } from './catalog-cache.js';
import { ParsedByBytes } from './parsed-by-bytes.js';
import type { Store } from './store.js';

// The price list the watchers price spend with, without parsing the whole catalogue at every look:
// the catalogue's cache entry also lists the project's instances (about 800 KB at 10,000), and its
// parse and schema check cost about 5 ms. Only the configurations are kept, for up to 64 projects a
// connection (a watcher looks at many).
const keptPrices = new ParsedByBytes<CatalogConfiguration[] | undefined>(64);

/** The cached price list of a project (the catalogue's configurations), undefined when none is cached. */
export async function watchedPrices(
  store: Store,
  projectId: string | undefined,
): Promise<CatalogConfiguration[] | undefined> {
  const key = catalogKey(store, projectId);
  return keptPrices.read(
    store.redis,
    key,
    await store.redis.getBuffer(key),
    (bytes) => catalogOf(entryOf(bytes.toString('utf8')))?.catalog.configurations,
  );
}
