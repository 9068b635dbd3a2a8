import type { Catalog } from './catalog-cache.js';
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
  const listed = catalog?.instances?.find((i) => i.name === ref || i.id === ref);
  if (listed) return listed.type;
  const remembered = await store.cached<unknown>(cacheName(projectId, ref));
  return typeof remembered?.value === 'string' ? remembered.value : undefined;
}
