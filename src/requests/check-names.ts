import { withDeadline } from '../commands/kit/with-deadline.js';
import { type GpuCommand, referencesOf, targetOf } from '../commands/registry.js';
import type { JobContext } from '../jobs/job-data.js';
import { jobIdFor } from '../jobs/queue.js';
import { addSystemJob } from '../jobs/system-jobs.js';
import { readCatalog } from '../store/catalog-cache.js';
import { type CatalogAndType, catalogAndTypeOf } from '../store/instance-types-seen.js';
import { listSchedules } from '../store/schedules.js';
import { type AcceptDeps, REDIS_MS } from './accept-kit.js';
import { mayBeNew, type TargetProblem, targetProblem } from './check-target.js';

// The names a request gives, checked before anything is queued or posted (docs/policy.md): from the
// cached catalogue and the channel's schedules in Redis, with a short wait for a fresh listing when a
// name may be brand new.
/** How long the listener waits for a fresh catalogue before sending a request on unchecked. */
const FRESH_CATALOG_WAIT_MS = 1_500;
const FRESH_CATALOG_POLL_MS = 100;

/**
 * No prices cached: ask for them in the background, so the next request is priced (at most one such
 * refresh a minute). `now` asks for one of its own, for a check that waits on it.
 */
export async function askForCatalog(
  deps: AcceptDeps,
  projectId: string | undefined,
  when: 'soon' | 'now' = 'soon',
): Promise<void> {
  const slot =
    when === 'now'
      ? `now-${Date.now()}-${Math.random().toString(36).slice(2, 6)}`
      : `${Math.floor(Date.now() / 60_000)}`;
  await withDeadline(
    addSystemJob(
      deps.queue,
      { v: 1, system: 'catalog.refresh', ...(projectId ? { projectId } : {}) },
      `catalog-${jobIdFor(projectId ?? 'none')}-${slot}`,
    ),
    REDIS_MS,
    'the queue',
  ).catch((err: unknown) => deps.log.warn({ err }, 'could not ask for a catalogue refresh'));
}

/**
 * The catalogue as a request was priced from: read for its target instance `ref` (the catalogue with
 * what gpuops last did to that instance), or for no instance (the catalogue alone).
 */
export interface CatalogRead {
  readonly ref: string | undefined;
  readonly known: CatalogAndType;
}

/**
 * Before it is queued or an approver sees it: the names it gives exist and the type is sold, judged
 * from the cached catalogue and the channel's schedules. A name the catalogue does not know may be
 * new, so a refresh is asked for and awaited briefly (Redis only: a worker reads the cloud), and only
 * a listing made after the request can say it does not exist; if none comes in time the request goes
 * on unchecked rather than making anyone wait. A request that names nothing reads nothing.
 */
export async function checkTarget(
  deps: AcceptDeps,
  command: GpuCommand,
  ctx: JobContext,
  priced?: CatalogRead,
): Promise<TargetProblem | undefined> {
  const refs = referencesOf(command);
  if (refs.length === 0) return undefined;
  const pricing = deps.guardrails.policy.pricing;
  const ref = targetOf(command);
  const redis = <T>(p: Promise<T>) => withDeadline(p, REDIS_MS, 'Redis');
  const read = () => redis(readCatalog(deps.store, ctx.projectId));
  // The catalogue and what gpuops last did to the named instance (made it, deleted it): one read, the
  // one the request was priced from when it was read for this same target.
  const [known, schedules] = await Promise.all([
    priced !== undefined && priced.ref === ref
      ? priced.known
      : ref !== undefined
        ? redis(catalogAndTypeOf(deps.store, ctx.projectId, ref))
        : read().then((cached): CatalogAndType => (cached ? { cached } : {})),
    refs.some((r) => r.what === 'schedule')
      ? redis(listSchedules(deps.store, { channelId: ctx.channelId })).then((all) => all.map((s) => s.id))
      : undefined,
  ]);
  const { cached } = known;
  const remembered = known.made === true;
  const listings = { remembered, schedules, pricing, gone: known.gone ? ref : undefined };
  const problem = targetProblem(command, { ...listings, catalog: cached?.catalog });
  // Types change seldom and schedules are in Redis: those decide now, and so does a deletion gpuops
  // saw after the listing was made. A listed name may be seconds old.
  if (known.gone && problem?.field === 'instance') return problem;
  const listed = refs.some((r) => mayBeNew(r.what) && !(r.what === 'instance' && remembered));
  if (cached ? !problem || !mayBeNew(problem.field) : !listed) return problem;
  const asked = Date.now();
  await askForCatalog(deps, ctx.projectId, 'now');
  const until = asked + FRESH_CATALOG_WAIT_MS;
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, FRESH_CATALOG_POLL_MS));
    const fresh = await read();
    if (fresh && fresh.catalog.refreshedAt >= asked) {
      // Listed after the request, so after any deletion gpuops saw: it alone says what is there.
      return targetProblem(command, { ...listings, gone: undefined, catalog: fresh.catalog });
    }
  }
  return undefined;
}
