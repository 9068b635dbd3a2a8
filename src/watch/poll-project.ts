import { CloudApiError, CloudNetworkError, CloudTimeoutError } from '../cloud/index.js';
import { classifyFailure } from '../commands/kit/job-errors.js';
import { isSpendCounted } from '../store/spend-projects.js';
import type { NewOutboxEntry } from '../store/watch-outbox.js';
import {
  createSnapshotStore,
  type LedgerChange,
  type ProjectSnapshot,
  resourceList,
} from '../store/watch-snapshots.js';
import { createWatchSubscriptions } from '../store/watch-subscriptions.js';
import { type Listings, listProject, resourcesOf } from './collect-resources.js';
import { changedKeys, diffSnapshots, type ResourceChange } from './diff-snapshot.js';
import { startDrains } from './drain-outbox.js';
import { refreshHomes } from './home-refresh.js';
import { GROUP_FROM, groupedEntries } from './look-summary.js';
import { ledgerChange, priceBookFor } from './spend.js';
import { changeReply, resourceMessage } from './watch-changes.js';
import { nowOf, type WatchDeps } from './watch-deps.js';

// One look at one watched or spend-counted project: list its resources, diff them with the stored snapshot, and commit
// the new snapshot together with the messages the changes produce (compare-and-set, so a look another
// replica beat posts nothing). The first look of a new watch records the baseline and posts nothing.
// A cloud that answers 429 or 5xx (or cannot be reached) puts the project on back-off.

/** Longest back-off between two looks at a project whose cloud keeps failing. */
export const MAX_BACKOFF_MS = 30 * 60_000;

/**
 * Where a look's time went, in milliseconds of wall-clock time, step by step (the benchmark reads
 * them: docs/performance.md). `list` is the API calls; `compare` turns the listing into resources and
 * diffs them with the last look's, the part that walks the whole fleet.
 */
export interface LookSteps {
  readonly read: number;
  readonly list: number;
  readonly compare: number;
  readonly render: number;
  readonly spend: number;
  readonly commit: number;
  /** Starting the drains and the Home tabs' refresh. */
  readonly after: number;
}

export type PollOutcome =
  | { readonly status: 'baseline'; readonly resources: number; readonly calls: number }
  | {
      readonly status: 'committed';
      readonly changes: number;
      readonly calls: number;
      readonly steps: LookSteps;
    }
  /** Another replica committed first: this look's changes are theirs to post. */
  | { readonly status: 'lost'; readonly calls: number }
  | { readonly status: 'backoff'; readonly untilMs: number; readonly reason: string }
  | { readonly status: 'skipped'; readonly reason: string };

/** The outbox entries of one change: the resource's message (posted or edited) and a thread reply. */
export function entriesFor(change: ResourceChange, at: number): NewOutboxEntry[] {
  const gone = change.type === 'gone';
  const { text, blocks } = resourceMessage({ resource: change.resource, gone, at });
  const reply = changeReply(change);
  return [
    { op: 'message', mode: 'upsert', ref: change.resource.key, text, blocks },
    {
      op: 'message',
      mode: 'post',
      thread: change.resource.key,
      text: reply,
      // A deleted resource is never edited again: its ref is dropped once the reply is out.
      ...(gone ? { forget: true } : {}),
    },
  ];
}

/**
 * The outbox entries of a whole look: a few changes as each resource's own message and reply; from
 * GROUP_FROM on, one summary with every change in its thread (docs/watch.md).
 */
export function entriesForLook(
  changes: readonly ResourceChange[],
  at: number,
  projectId: string,
): NewOutboxEntry[] {
  if (changes.length < GROUP_FROM) return changes.flatMap((c) => entriesFor(c, at));
  return groupedEntries({ changes, projectId, at });
}

/** Back-off after `failures` failed looks in a row: doubling from the poll interval, Retry-After at least. */
export function backoffMs(failures: number, pollEveryMs: number, retryAfterMs?: number): number {
  const doubling = pollEveryMs * 2 ** Math.max(0, failures - 1);
  return Math.min(MAX_BACKOFF_MS, Math.max(doubling, retryAfterMs ?? 0));
}

/** Milliseconds since the last lap (or the clock's start). */
function stepClock(): () => number {
  let mark = performance.now();
  return () => {
    const now = performance.now();
    const ms = now - mark;
    mark = now;
    return ms;
  };
}

function isCloudTrouble(err: unknown): boolean {
  return err instanceof CloudApiError || err instanceof CloudNetworkError || err instanceof CloudTimeoutError;
}

export async function pollProject(
  deps: WatchDeps,
  projectId: string,
  signal: AbortSignal,
): Promise<PollOutcome> {
  const lap = stepClock();
  const snapshots = createSnapshotStore(deps.store);
  const subscriptions = createWatchSubscriptions(deps.store);
  // Side by side: a look's round trips that do not depend on each other cost one wait, not three.
  const [targets, stored, counted] = await Promise.all([
    subscriptions.channelsOf(projectId),
    snapshots.read(projectId),
    isSpendCounted(deps.store, projectId),
  ]);
  // A project nobody watches is still looked at when its spend is counted: its ledger, no messages.
  if (targets.length === 0 && !counted) {
    return { status: 'skipped', reason: 'no channel watches this project' };
  }
  // Read while the cloud lists (priceBookFor never rejects: no price is "unknown").
  const pricesP = priceBookFor(deps.store, projectId, deps.policy);
  const started = nowOf(deps);
  const read = lap();

  let listed: Listings | undefined;
  try {
    listed = await listProject(deps.cloud, projectId, signal);
  } catch (err) {
    if (signal.aborted || !isCloudTrouble(err)) throw err;
    const previous = await snapshots.backoff(projectId);
    const failures = (previous?.failures ?? 0) + 1;
    const retryAfterMs = err instanceof CloudApiError ? err.retryAfterMs : undefined;
    const until = started + backoffMs(failures, deps.policy.watch.pollEverySeconds * 1000, retryAfterMs);
    const reason = classifyFailure(err).message;
    await snapshots.setBackoff(projectId, { until, failures, reason });
    deps.log.warn({ projectId, failures, until, err }, 'watcher backs off a project');
    return { status: 'backoff', untilMs: until, reason };
  }
  const list = lap();
  const now = nowOf(deps);
  const next: ProjectSnapshot = {
    v: 1,
    polledAt: now,
    resources: resourcesOf(listed, stored.snapshot?.resources),
  };
  // Let the listing go (2.3 MB of JSON at 10,000): a minor collection in the rest of the look would
  // otherwise copy all of it, about 10 ms.
  const { calls } = listed;
  listed = undefined;
  const changes = stored.snapshot ? diffSnapshots(stored.snapshot.resources, next.resources) : [];
  const compare = lap();
  const entries = targets.length > 0 ? entriesForLook(changes, now, projectId) : [];
  const render = lap();
  // The spend goes in with the snapshot (one script), so it is counted once, by the replica that commits.
  let ledger: LedgerChange | undefined;
  const prices = await pricesP;
  // No price list cached for this project (only CLOUD_PROJECT_ID's is refreshed on a schedule): its
  // hours count now, its dollars from the look after the list arrives (docs/budgets.md).
  if (!prices.configurations) await deps.askForPrices?.(projectId);
  try {
    ledger = ledgerChange(stored.snapshot, changes, next, prices, deps.policy.digest.tz);
  } catch (err) {
    deps.log.warn({ err, projectId }, 'could not add to the spend ledger');
  }
  const spend = lap();
  const result = await snapshots.commit(projectId, stored.version, next, targets, entries, {
    ...(ledger ? { ledger } : {}),
    ...(stored.snapshot ? { changed: changedKeys(changes) } : {}),
  });
  const commit = lap();
  if (!result.committed) return { status: 'lost', calls };
  await startDrains(deps, result.kicked);
  // Only the replica that committed tells the owners, so each change refreshes a Home once.
  await refreshHomes(deps, changes, next, !stored.snapshot).catch((err: unknown) =>
    deps.log.warn({ err, projectId }, 'could not refresh Home tabs'),
  );
  if (!stored.snapshot) {
    return { status: 'baseline', resources: resourceList(next.resources).length, calls };
  }
  const steps = { read, list, compare, render, spend, commit, after: lap() };
  return { status: 'committed', changes: changes.length, calls, steps };
}
