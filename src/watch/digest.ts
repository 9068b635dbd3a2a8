import { describeCommand, gpuCommandSchema } from '../commands/registry.js';
import { gpusOfType } from '../pricing/cost.js';
import { digestMessage } from '../render/digest.js';
import { createApprovals } from '../store/approvals.js';
import { createIdleState } from '../store/idle-state.js';
import { createWaitlist } from '../store/waitlist.js';
import { createOutbox } from '../store/watch-outbox.js';
import { createSnapshotStore } from '../store/watch-snapshots.js';
import { createWatchSubscriptions } from '../store/watch-subscriptions.js';
import { availabilityOf, type ProjectAvailability, satisfies } from './availability.js';
import { startDrains } from './drain-outbox.js';
import { periodsOf, priceBookFor, runningCost } from './spend.js';
import { nowOf, type WatchDeps } from './watch-deps.js';

// The daily digest (a cron job scheduler in the policy's time zone): for every watching channel, from
// what the watchers already know — the project's last snapshot, the spend ledger, idle records,
// pending approvals — plus, per project, what can be ordered (capacity listing, else the price list).

export async function sendDigests(deps: WatchDeps, signal: AbortSignal): Promise<string> {
  const watches = await createWatchSubscriptions(deps.store).all();
  if (watches.length === 0) return 'no watching channel';
  const now = nowOf(deps);
  const { day, month } = periodsOf(now, deps.policy.digest.tz);
  const snapshots = createSnapshotStore(deps.store);
  const idle = createIdleState(deps.store);
  const waitlist = createWaitlist(deps.store);
  const pending = await createApprovals(deps.store.redis, {
    prefix: deps.store.prefix,
    command: gpuCommandSchema,
  }).listPending({ now });
  const availability = new Map<string, ProjectAvailability | undefined>();
  const outbox = createOutbox(deps.store);
  // Read once for every channel; a digest without its budget lines is better than none.
  const budgets = await (deps.budgets?.months(now) ?? Promise.resolve([])).catch((err: unknown) => {
    deps.log.warn({ err }, 'digests go without their budget lines');
    return [];
  });
  let sent = 0;

  for (const watch of watches) {
    const { projectId, channelId } = watch;
    const snapshot = (await snapshots.read(projectId)).snapshot;
    const ledger = await snapshots.ledgerDay(projectId, day);
    const monthUsd = await snapshots.ledgerMonthUsd(projectId, month);
    const prices = await priceBookFor(deps.store, projectId, deps.policy);
    const resources = Object.values(snapshot?.resources ?? {});
    const runningInstances = resources
      .filter((r) => r.kind === 'instance' && r.fields.state === 'running')
      .sort((a, b) => a.name.localeCompare(b.name));
    if (!availability.has(projectId)) {
      try {
        availability.set(projectId, await availabilityOf(deps, projectId, signal));
      } catch (err) {
        if (signal.aborted) throw err;
        deps.log.warn({ err, projectId }, 'digest goes without capacity');
        availability.set(projectId, undefined);
      }
    }
    const listing = availability.get(projectId);
    const usedTypes = new Set([
      ...resources
        .filter((r) => r.kind === 'instance' || r.kind.endsWith('pool'))
        .flatMap((r) => r.fields.type ?? []),
      ...(await waitlist.list(channelId)).map((e) => e.type),
    ]);
    const { text, blocks } = digestMessage({
      projectLabel: watch.projectName ?? projectId,
      day,
      tz: deps.policy.digest.tz,
      running: runningInstances.map((r) => ({
        name: r.name,
        type: r.fields.type ?? '',
        gpus: gpusOfType(r.fields.type ?? '', deps.policy.pricing)?.gpuCount,
        gpuHoursToday: ledger.instances[r.id] ?? 0,
      })),
      spendTodayUsd: ledger.usd,
      spendMonthUsd: monthUsd,
      unpriced: runningInstances
        .filter((r) => !runningCost(r.fields.type ?? '', prices).known)
        .map((r) => r.name),
      idle: (await idle.records(projectId)).map((r) => ({ name: r.name, idleMs: now - r.since })),
      approvals: pending
        .filter((a) => a.ctx.channelId === channelId || a.approvalChannel === channelId)
        .map((a) => ({
          request: describeCommand(a.command),
          requester: a.requester,
          expiresAt: a.expiresAt,
        })),
      ...(listing
        ? {
            capacity: [...usedTypes].sort().map((type) => {
              const offered = listing.types.get(type);
              return {
                type,
                available:
                  listing.source === 'capacity'
                    ? `${offered?.capacity ?? 0} available`
                    : satisfies(offered, 1)
                      ? `offered in ${offered!.price!.regions.join(', ')}`
                      : 'not offered now',
              };
            }),
            capacitySource: listing.source,
          }
        : {}),
      budgets: budgets
        .filter((b) => b.budget.projects.length === 0 || b.budget.projects.includes(projectId))
        .map((b) => b.status),
      now,
    });
    const token = await outbox.push(channelId, [{ op: 'message', mode: 'post', text, blocks }]);
    if (token) await startDrains(deps, [{ target: channelId, token }]);
    sent++;
  }
  return `${sent} digest(s) for ${day}`;
}
