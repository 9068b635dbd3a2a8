import { kindsMissingIn } from '../commands/availability.js';
import type { HomeData, HomeForm, HomeMachine, HomeSchedule } from '../commands/home/home-data.js';
import { scheduleTargetText } from '../commands/schedules/render.js';
import { approvableBy, groupsInPolicy, roleOf } from '../policy/decide.js';
import { type CostEstimate, estimateMachines, type PriceBook } from '../pricing/cost.js';
import { loginUserFor, sshCommand } from '../render/ssh-login.js';
import { readCatalog } from '../store/catalog-cache.js';
import { runningSince } from '../store/home-state.js';
import { forgetOwnedInstance, instancesOwnedBy } from '../store/instance-owners.js';
import { listSchedules } from '../store/schedules.js';
import { createWaitlist } from '../store/waitlist.js';
import { createSnapshotStore } from '../store/watch-snapshots.js';
import type { HomeDeps, ProjectView } from './home-deps.js';
import { gatherSpend } from './home-spend.js';

// Everything a Home tab shows, read from Redis alone: the person's machines as the state watcher last
// saw them, the approvals they may decide, the spend ledger, their waitlist entries and schedules.

/** The forms a Home tab offers, where the API shape has them. */
const FORMS: readonly HomeForm[] = [
  { form: 'create', label: 'Create a machine…' },
  { form: 'keys.add', label: 'Add an SSH key…' },
  { form: 'slurm.adduser', label: 'Join a Slurm cluster…' },
];

async function projectViews(
  deps: HomeDeps,
  projectIds: readonly string[],
  channels: readonly string[],
): Promise<Map<string, ProjectView>> {
  const snapshots = createSnapshotStore(deps.store);
  const bindings = await Promise.all(channels.map((c) => deps.store.projectOf(c)));
  const views = await Promise.all(
    projectIds.map(async (p) => {
      const [stored, cached] = await Promise.all([snapshots.read(p), readCatalog(deps.store, p)]);
      const name = bindings.find((b) => b?.projectId === p && b.name)?.name;
      return [p, { name, snapshot: stored.snapshot, catalog: cached?.catalog }] as const;
    }),
  );
  return new Map(views);
}

async function gatherMachines(
  deps: HomeDeps,
  userId: string,
): Promise<{ machines: HomeMachine[]; projects: Map<string, ProjectView> }> {
  const owned = await instancesOwnedBy(deps.store, userId);
  const projectOf = (p: string | undefined) => p ?? deps.defaultProjectId ?? '';
  const projects = await projectViews(
    deps,
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
    const seen = view?.snapshot?.resources[`instance:${o.id}`];
    if (view?.snapshot && !seen) {
      // Its watched project no longer lists it: deleted.
      await forgetOwnedInstance(deps.store, userId, o.id);
      continue;
    }
    const type = seen?.fields.type ?? view?.catalog?.instances?.find((x) => x.id === o.id)?.type;
    const cost = type ? priceOf(projectId, type, view) : undefined;
    const lease = leases.find(
      (l) => (l.instance === o.name || l.instance === o.id) && projectOf(l.projectId) === projectId,
    );
    machines.push({
      id: o.id,
      name: seen?.name ?? o.name,
      channelId: o.channelId,
      ...(projectId ? { projectId } : {}),
      state: seen?.fields.state,
      type,
      cost,
      regions: cost?.known ? cost.regions : undefined,
      runningSince: since[i],
      leaseEndsAt: lease?.stopAt,
      seenAt: view?.snapshot?.polledAt,
      ...(seen?.fields.ip && seen.fields.state === 'running'
        ? { ssh: sshCommand(loginUserFor(deps.policy.login, { type }), seen.fields.ip) }
        : {}),
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
  const { machines, projects } = await gatherMachines(deps, userId);
  const [approvals, waitlist, schedules, spend, keys] = await Promise.all([
    gatherApprovals(deps, userId),
    createWaitlist(deps.store)
      .all()
      .then((all) => all.filter((e) => e.by === userId)),
    schedulesOf(deps, userId),
    gatherSpend(deps, machines, projects, now),
    deps.store.keysOf(userId),
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
    forms,
    loginKeys: { own: keys.map((k) => ({ name: k.name, publicKey: k.publicKey })) },
    ...(notice ? { notice } : {}),
  };
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
