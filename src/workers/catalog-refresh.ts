import type { CapacityEntry, Configuration, Filesystem, Instance } from '../cloud/index.js';
import { catalogFailedView } from '../commands/forms/catalog-blocks.js';
import { type FormContext, type FormSpec, filesystemFieldFor } from '../commands/forms/form-kit.js';
import { decodeModalMetadata } from '../commands/forms/modal-metadata.js';
import { classifyFailure } from '../commands/kit/job-errors.js';
import { formSpecOf } from '../commands/registry.js';
import { type CatalogRefreshData, JobDataError } from '../jobs/job-data.js';
import { isOffered, type OfferedType, typesFromPriceList } from '../pricing/offered-types.js';
import {
  type Catalog,
  type CatalogInstanceType,
  instancesListedAt,
  readCatalog,
  TYPE_MEMORY_MS,
  writeCatalog,
} from '../store/catalog-cache.js';
import type { WorkerDeps } from './worker-deps.js';

// The `catalog.refresh` system job: reads prices and the account's SSH keys (platform API), capacity, the
// project's instances, filesystems and clusters (infrastructure API), merges them with what the cache
// already knew, and writes the catalogue the forms open from and the names in requests are checked
// against. A form left in its loading state is then filled in place.

export const PRICES_NOT_CONFIGURED =
  'Prices need the platform API: set PLATFORM_API_URL and PLATFORM_API_KEY to see them here.';

type Part<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: unknown }
  | undefined;

async function part<T>(wanted: boolean, fetch: () => Promise<T>): Promise<Part<T>> {
  if (!wanted) return undefined;
  try {
    return { ok: true, value: await fetch() };
  } catch (error) {
    return { ok: false, error };
  }
}

const because = (what: string, error: unknown) =>
  `${what} could not be refreshed: ${classifyFailure(error).message}`;

function mergeTypes(
  previous: readonly CatalogInstanceType[],
  capacity: Part<CapacityEntry[]>,
  offered: readonly OfferedType[] | undefined,
  instances: Part<Instance[]>,
  now: number,
): CatalogInstanceType[] {
  const types = new Map<string, CatalogInstanceType>();
  for (const t of previous) {
    if (now - t.lastSeenAt > TYPE_MEMORY_MS) continue;
    const { capacity: oldCapacity, offered: wasOffered, ...rest } = t;
    // A fresh listing replaces what the old one said; a failed one leaves it as it was.
    const keepCapacity = capacity === undefined || !capacity.ok;
    types.set(t.name, {
      ...rest,
      ...(keepCapacity && oldCapacity !== undefined ? { capacity: oldCapacity } : {}),
      ...(offered === undefined && wasOffered !== undefined ? { offered: wasOffered } : {}),
      inUse: instances?.ok ? 0 : t.inUse,
    });
  }
  const touch = (name: string, change: Partial<CatalogInstanceType>) => {
    const current = types.get(name) ?? { name, inUse: 0, lastSeenAt: now };
    types.set(name, { ...current, ...change, lastSeenAt: now });
  };
  if (capacity?.ok) for (const entry of capacity.value) touch(entry.name, { capacity: entry.capacity });
  for (const type of offered ?? []) touch(type.name, { offered: isOffered(type) });
  if (instances?.ok) {
    for (const instance of instances.value) {
      touch(instance.type, { inUse: (types.get(instance.type)?.inUse ?? 0) + 1 });
    }
  }
  return [...types.values()];
}

const configurationOf = (c: Configuration) => ({
  gpuType: c.gpu_type,
  gpuCounts: c.gpu_counts,
  pricePerGpuHour: c.price_per_gpu_hr,
  stoppedPricePerHour: c.stopped_price_per_hour,
  regions: c.regions,
  provisioningMinutes: c.estimated_provisioning_time_minutes,
});

const filesystemOf = (f: Filesystem) => ({ id: f.id, name: f.name, size: f.size });

/** A fresh listing, else the last one (a failed listing keeps what was known, none at all stays none). */
function listed<T, U>(fresh: Part<T[]>, map: (item: T) => U, old: U[] | undefined): U[] | undefined {
  return fresh?.ok ? fresh.value.map(map) : old;
}

const clusterOf = (c: { id: string; name: string }) => ({ id: c.id, name: c.name });

/**
 * Fetches every part the deployment offers and writes the merged catalogue. A part that fails keeps
 * its last known value and is named in `problems`; when every part fails the error is thrown, so the
 * job is retried.
 */
export async function refreshCatalog(
  deps: WorkerDeps,
  projectId: string | undefined,
  signal: AbortSignal,
): Promise<{ catalog: Catalog; storedAt: number }> {
  const { cloud, platform } = deps;
  const now = (deps.now ?? Date.now)();
  const call = { ...(projectId ? { projectId } : {}), signal };
  const [previous, configs, capacity, instances, filesystems, k8s, slurm, keys] = await Promise.all([
    readCatalog(deps.store, projectId),
    part(platform !== undefined, () => platform!.listConfigurations({ signal })),
    part(cloud.supports('listCapacity'), () => cloud.listCapacity(call)),
    part(cloud.supports('listInstances'), () => cloud.listInstances(call)),
    part(cloud.supports('listFilesystems'), () => cloud.listFilesystems(call)),
    part(cloud.supports('listK8sClusters'), () => cloud.listK8sClusters(call)),
    part(cloud.supports('listSlurmClusters'), () => cloud.listSlurmClusters(call)),
    part(platform !== undefined, () => platform!.listSshKeys({ signal })),
  ]);
  const tried = [configs, capacity, instances, filesystems, k8s, slurm, keys].filter((p) => p !== undefined);
  const failed = tried.filter((p) => !p.ok);
  if (tried.length > 0 && failed.length === tried.length) throw (failed[0] as { error: unknown }).error;

  const old = previous?.catalog;
  const problems: string[] = [];
  if (configs === undefined) problems.push(PRICES_NOT_CONFIGURED);
  else if (!configs.ok) problems.push(because('Prices', configs.error));
  if (capacity && !capacity.ok) problems.push(because('Capacity', capacity.error));
  if (instances && !instances.ok) problems.push(because("The project's instances", instances.error));
  if (filesystems && !filesystems.ok) problems.push(because('Filesystems', filesystems.error));

  const configurations = configs?.ok ? configs.value.map(configurationOf) : old?.configurations;
  const fsList = filesystems?.ok
    ? filesystems.value.map(filesystemOf)
    : filesystems
      ? old?.filesystems
      : undefined;
  // The guardrails price `/gpu start <name>` by the instance's type, read from here.
  const instanceList = listed(instances, (i) => ({ id: i.id, name: i.name, type: i.type }), old?.instances);
  // Only for checking names in requests: a failed listing is not the forms' concern, so not a problem.
  const k8sClusters = listed(k8s, clusterOf, old?.k8sClusters);
  const slurmClusters = listed(slurm, clusterOf, old?.slurmClusters);
  const sshKeys = listed(keys, (k) => k.name, old?.sshKeys);
  const catalog: Catalog = {
    v: 1,
    refreshedAt: now,
    ...(configurations ? { configurations } : {}),
    // Without a capacity listing, the price list names the types one can order (offered-types.ts).
    instanceTypes: mergeTypes(
      old?.instanceTypes ?? [],
      capacity,
      capacity === undefined && configs?.ok ? typesFromPriceList(configs.value) : undefined,
      instances,
      now,
    ),
    ...(fsList ? { filesystems: fsList } : {}),
    ...(instanceList ? { instances: instanceList } : {}),
    // What a deletion gpuops saw is weighed against (a failed listing keeps the old list and its time).
    ...(instances?.ok
      ? { instancesListedAt: now }
      : instanceList && old
        ? { instancesListedAt: instancesListedAt(old) }
        : {}),
    ...(k8sClusters ? { k8sClusters } : {}),
    ...(slurmClusters ? { slurmClusters } : {}),
    ...(sshKeys ? { sshKeys } : {}),
    problems,
  };
  await writeCatalog(deps.store, projectId, catalog);
  return { catalog, storedAt: now };
}

function formContext(deps: WorkerDeps, metadata: string): FormContext {
  return {
    metadata: decodeModalMetadata(metadata),
    shape: deps.shape,
    routes: deps.cloud.routes,
    filesystems: filesystemFieldFor((op) => deps.cloud.supports(op)),
    now: (deps.now ?? Date.now)(),
  };
}

/** Slack errors that mean the form is no longer there to fill (closed, or changed meanwhile). */
const GONE = new Set(['not_found', 'hash_conflict', 'view_not_found']);

async function updateView(
  deps: WorkerDeps,
  target: NonNullable<CatalogRefreshData['view']>,
  view: ReturnType<FormSpec['view']>,
): Promise<void> {
  try {
    await deps.slack.views.update({
      view_id: target.id,
      ...(target.hash ? { hash: target.hash } : {}),
      view,
    });
  } catch (err) {
    const code = (err as { data?: { error?: string } }).data?.error;
    if (code && GONE.has(code)) {
      deps.log.info({ viewId: target.id, code }, 'the form waiting for the catalogue is gone');
      return;
    }
    throw err;
  }
}

/** Fills the form that waited for the catalogue. */
export async function showCatalogInForm(
  deps: WorkerDeps,
  target: NonNullable<CatalogRefreshData['view']>,
  entry: { catalog: Catalog; storedAt: number },
): Promise<void> {
  let ctx: FormContext;
  try {
    ctx = formContext(deps, target.metadata);
  } catch (err) {
    throw new JobDataError(String((err as Error).message));
  }
  const spec = formSpecOf(ctx.metadata.form);
  await updateView(deps, target, spec.view({ ...ctx, catalog: entry }));
}

/** Tells the waiting form that the catalogue could not be loaded (the job's last attempt failed). */
export async function showCatalogFailure(
  deps: WorkerDeps,
  target: NonNullable<CatalogRefreshData['view']>,
  why: string,
): Promise<void> {
  const ctx = formContext(deps, target.metadata);
  const spec = formSpecOf(ctx.metadata.form);
  const previous = await readCatalog(deps.store, ctx.metadata.projectId);
  const view = previous
    ? spec.view({
        ...ctx,
        catalog: {
          ...previous,
          catalog: {
            ...previous.catalog,
            problems: [...previous.catalog.problems, `Refresh failed: ${why}`],
          },
        },
      })
    : catalogFailedView(spec, ctx, why);
  await updateView(deps, target, view);
}
