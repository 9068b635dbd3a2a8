import { kindsMissingIn } from '../commands/availability.js';
import type { HomeData, HomeForm, HomeMachine, HomeSchedule } from '../commands/home/home-data.js';
import { scheduleTargetText } from '../commands/schedules/render.js';
import { approvableBy, groupsInPolicy, roleOf } from '../policy/decide.js';
import { type CostEstimate, estimateMachines, type PriceBook } from '../pricing/cost.js';
import type { BudgetFigures } from '../render/budget-gauge.js';
import { loginUserFor, sshCommand } from '../render/ssh-login.js';
import { readCatalog } from '../store/catalog-cache.js';
import { machinesChangedAt, runningSince } from '../store/home-state.js';
import { forgetOwnedInstance, instancesOwnedBy, type OwnedInstance } from '../store/instance-owners.js';
import { listSchedules } from '../store/schedules.js';
import { createWaitlist } from '../store/waitlist.js';
import { createSnapshotStore } from '../store/watch-snapshots.js';
import type { HomeDeps, ProjectView } from './home-deps.js';
import { gatherSpend } from './home-spend.js';

// Everything a Home tab shows: the person's machines as gpuops last saw them (the state watcher's look,
// the create job's record, or for a project no channel watches a listing read from the cloud as the
// Home opens), the approvals they may decide, the spend ledger, their waitlist entries and schedules.

/** The forms a Home tab offers, where the API shape has them. */
const FORMS: readonly HomeForm[] = [
  { form: 'create', label: 'Create a machine…' },
  { form: 'keys.add', label: 'Add an SSH key…' },
  { form: 'slurm.adduser', label: 'Join a Slurm cluster…' },
];

/**
 * How long the state a create job recorded is shown when nothing has looked at the machine since: long
 * enough for the watcher's next look or a Home opened soon after, short enough not to show a state
 * days old as current.
 */
const RECORD_TRUSTED_MS = 10 * 60_000;

/** At most this many unwatched projects are read from the cloud per Home opened; the rest show unknown. */
export const LIVE_PROJECTS_READ = 5;

/**
 * How long a watcher's look may have listed before it was dated (`polledAt` is when its listing
 * ended): a look dated less than this after a job changed a machine may have listed it as it was.
 */
export const LOOK_LISTING_MS = 30_000;

/** True when the watcher's look at a project may predate the last change a job made to its machines. */
const lookPredates = (polledAt: number, changedAt: number | undefined) =>
  changedAt !== undefined && polledAt - LOOK_LISTING_MS < changedAt;

async function projectViews(
  deps: HomeDeps,
  userId: string,
  projectIds: readonly string[],
  channels: readonly string[],
): Promise<Map<string, ProjectView>> {
  const snapshots = createSnapshotStore(deps.store);
  const bindings = await Promise.all(channels.map((c) => deps.store.projectOf(c)));
  const changed = await machinesChangedAt(deps.store, projectIds);
  const stored = await Promise.all(
    projectIds.map(async (p, i) => {
      const [read, cached] = await Promise.all([snapshots.read(p), readCatalog(deps.store, p)]);
      const name = bindings.find((b) => b?.projectId === p && b.name)?.name;
      const changedAt = changed[i];
      return [p, { name, snapshot: read.snapshot, catalog: cached?.catalog, changedAt }] as const;
    }),
  );
  // A project no channel watches is read from the cloud now, through the reader the process was
  // given (bounded and cached by it); so is a watched one whose last look may predate what a job of
  // gpuops did to its machines since. Without a reader, or past the bound, their machines show unknown.
  const unwatched = stored
    .filter(([, v]) => !v.snapshot || lookPredates(v.snapshot.polledAt, v.changedAt))
    .slice(0, LIVE_PROJECTS_READ);
  const read = deps.readMachines;
  if (!read && unwatched.length > 0) {
    await deps.publishLater?.(userId).catch((err: unknown) => {
      deps.log.warn({ err }, 'could not ask a worker to publish a Home tab with the cloud’s listing');
    });
  }
  const listings = new Map(
    read
      ? await Promise.all(
          unwatched.map(
            async ([p, v]) => [p, await read(p, { after: v.changedAt }).catch(() => undefined)] as const,
          ),
        )
      : [],
  );
  return new Map(
    stored.map(([p, view]) => {
      const listing = listings.get(p);
      return [p, listing ? { ...view, listing } : view] as const;
    }),
  );
}

/** What gpuops knows of one owned machine, newest first; `gone` when a listing newer than its record lacks it. */
function machineSeen(
  o: OwnedInstance,
  view: ProjectView | undefined,
  now: number,
): { gone: true } | { gone: false; state?: string; type?: string; seenAt?: number; ip?: string } {
  const snapshot = view?.snapshot;
  const fromSnapshot = snapshot?.resources[`instance:${o.id}`];
  const listed = view?.listing?.machines.find((m) => m.id === o.id);
  const looks = [
    ...(snapshot ? [{ at: snapshot.polledAt, found: fromSnapshot?.fields, watcher: true }] : []),
    ...(view?.listing ? [{ at: view.listing.listedAt, found: listed, watcher: false }] : []),
  ].sort((a, b) => b.at - a.at);
  const newest = looks[0];
  // A listing made before the create job recorded the machine may simply predate it: only a newer
  // one (or one of a record from before records were dated) can say it is gone.
  if (newest && !newest.found && (o.recordedAt === undefined || newest.at > o.recordedAt)) {
    return { gone: true };
  }
  // In a watched project the create job's record stands for the machine's state until the watcher's
  // next look, for a while. Elsewhere nothing follows the machine after it was made (a stop through
  // gpuops included), so without a listing its state is unknown.
  const recorded =
    snapshot !== undefined &&
    o.state !== undefined &&
    o.recordedAt !== undefined &&
    now - o.recordedAt < RECORD_TRUSTED_MS
      ? [{ at: o.recordedAt, found: { state: o.state }, watcher: false }]
      : [];
  // What a job of gpuops did to the project's machines since a look (or the record) is not in it.
  const changedAt = view?.changedAt;
  const current = (l: { at: number; watcher: boolean }) =>
    l.watcher ? !lookPredates(l.at, changedAt) : changedAt === undefined || l.at >= changedAt;
  const known = [...looks.filter((l) => l.found?.state !== undefined), ...recorded]
    .filter(current)
    .sort((a, b) => b.at - a.at)[0];
  const type = fromSnapshot?.fields.type ?? listed?.type ?? o.type;
  // Where to log in: the address of the newest look that found it, while that look says it runs.
  const found = known?.found as { state?: string; ip?: string } | undefined;
  return {
    gone: false,
    ...(found?.state !== undefined ? { state: found.state, seenAt: known!.at } : {}),
    ...(found?.state === 'running' && found.ip ? { ip: found.ip } : {}),
    ...(type !== undefined ? { type } : {}),
  };
}

async function gatherMachines(
  deps: HomeDeps,
  userId: string,
  now: number,
): Promise<{ machines: HomeMachine[]; projects: Map<string, ProjectView> }> {
  const owned = await instancesOwnedBy(deps.store, userId);
  const projectOf = (p: string | undefined) => p ?? deps.defaultProjectId ?? '';
  const projects = await projectViews(
    deps,
    userId,
    [...new Set(owned.map((o) => projectOf(o.projectId)))].filter((p) => p !== ''),
    [...new Set(owned.map((o) => o.channelId))],
  );
  const [since, leases] = await Promise.all([
    runningSince(
      deps.store,
      owned.map((o) => o.id),
    ),
    deps.leases.activeFor(userId),
  ]);
  // A fleet shares a handful of types: each is priced once per project.
  const prices = new Map<string, CostEstimate>();
  const priceOf = (projectId: string, type: string, view: ProjectView | undefined): CostEstimate => {
    const key = `${projectId} ${type}`;
    let cost = prices.get(key);
    if (!cost) {
      const book: PriceBook = { configurations: view?.catalog?.configurations, pricing: deps.policy.pricing };
      cost = estimateMachines({ prices: book, type, state: 'running' });
      prices.set(key, cost);
    }
    return cost;
  };
  const machines: HomeMachine[] = [];
  for (const [i, o] of owned.entries()) {
    const projectId = projectOf(o.projectId);
    const view = projects.get(projectId);
    const seen = machineSeen(o, view, now);
    if (seen.gone) {
      // Its project, looked at after gpuops made it, no longer lists it: deleted.
      await forgetOwnedInstance(deps.store, userId, o.id);
      continue;
    }
    const name = view?.snapshot?.resources[`instance:${o.id}`]?.name ?? o.name;
    const type = seen.type ?? view?.catalog?.instances?.find((x) => x.id === o.id)?.type;
    const cost = type ? priceOf(projectId, type, view) : undefined;
    const lease = leases.find(
      (l) => (l.instance === o.name || l.instance === o.id) && projectOf(l.projectId) === projectId,
    );
    machines.push({
      id: o.id,
      name,
      channelId: o.channelId,
      ...(projectId ? { projectId } : {}),
      state: seen.state,
      type,
      cost,
      regions: cost?.known ? cost.regions : undefined,
      runningSince: since[i],
      leaseEndsAt: lease?.stopAt,
      seenAt: seen.seenAt,
      ...(seen.ip ? { ssh: sshCommand(loginUserFor(deps.policy.login, { type }), seen.ip) } : {}),
    });
  }
  return { machines, projects };
}

/** Approvals this person may decide; undefined when they approve nothing (the section is left out). */
async function gatherApprovals(deps: HomeDeps, userId: string): Promise<HomeData['approvals']> {
  const { policy } = deps;
  const [groups, pending] = await Promise.all([
    deps.groupsOf(userId, groupsInPolicy(policy)),
    deps.approvals.listPending({ limit: 200 }),
  ]);
  const mine = approvableBy(policy, userId, groups, pending);
  const { users, groups: approverGroups } = policy.approvals.approvers;
  const listed = users.includes(userId) || approverGroups.some((g) => groups.includes(g));
  const admin = roleOf({ policy, userId, userGroups: groups }).role === 'admin';
  return mine.length > 0 || listed || admin ? mine : undefined;
}

export async function gatherHome(deps: HomeDeps, userId: string, notice?: string): Promise<HomeData> {
  const now = (deps.now ?? Date.now)();
  const { machines, projects } = await gatherMachines(deps, userId, now);
  const [approvals, waitlist, schedules, spend, keys, budgets] = await Promise.all([
    gatherApprovals(deps, userId),
    createWaitlist(deps.store)
      .all()
      .then((all) => all.filter((e) => e.by === userId)),
    schedulesOf(deps, userId),
    gatherSpend(deps, machines, projects, now),
    deps.store.keysOf(userId),
    budgetsOf(deps, userId, [...projects.keys()], now),
  ]);
  const missing: ReadonlySet<string> = new Set(kindsMissingIn(deps.shape, deps.routes));
  const forms = FORMS.filter((f) => !missing.has(f.form));
  return {
    userId,
    now,
    machines,
    approvals,
    waitlist,
    schedules,
    spend,
    budgets,
    forms,
    loginKeys: { own: keys.map((k) => ({ name: k.name, publicKey: k.publicKey })) },
    ...(notice ? { notice } : {}),
  };
}

/** The budgets the person owns, and those covering a project they work in (a budget of every project, any). */
async function budgetsOf(
  deps: HomeDeps,
  userId: string,
  projects: readonly string[],
  now: number,
): Promise<BudgetFigures[]> {
  if (!deps.budgets) return [];
  try {
    const all = await deps.budgets(now);
    return all
      .filter(
        (b) =>
          b.owners.includes(userId) ||
          (projects.length > 0 && (b.projects.length === 0 || b.projects.some((p) => projects.includes(p)))),
      )
      .map((b) => b.status);
  } catch (err) {
    // The rest of the Home tab is still worth publishing.
    deps.log.warn({ err }, 'the Home tab goes without budgets');
    return [];
  }
}

/** The person's power schedules (those they made), as the Home tab lists them. */
async function schedulesOf(deps: HomeDeps, userId: string): Promise<HomeSchedule[]> {
  const schedules = await listSchedules(deps.store, { userId });
  return schedules.map((s) => ({
    id: s.id,
    action: s.action,
    target: scheduleTargetText(s.target),
    when: `${s.when} (${s.tz})`,
    channel: s.channelId,
  }));
}
