import type { WebClient } from '@slack/web-api';
import type { InfraClient, PlatformClient } from '../cloud/index.js';
import type { Shape } from '../cloud/shape.js';
import type { HomePublisher } from '../home/home-deps.js';
import type { Logger } from '../log/logger.js';
import type { Policy } from '../policy/policy.js';
import type { EnqueueResult } from '../requests/enqueue-request.js';
import type { PolicyAction } from '../requests/policy-action.js';
import type { ScheduledAction, ScheduledResult, ScheduleRefusal } from '../requests/scheduled-action.js';
import type { SnapshotDeps } from '../snapshot/take-snapshot.js';
import type { Store } from '../store/store.js';
import type { BudgetWatch } from './budget-watch.js';
import type { WatchQueue } from './watch-queue.js';

/** What the watchers' processors touch, built once by the composition root. */
export interface WatchDeps {
  readonly cloud: InfraClient;
  /** Present when PLATFORM_API_* is configured: the price list says what can be ordered in A and B. */
  readonly platform?: PlatformClient | undefined;
  /**
   * Posts the outboxes. Built with `rejectRateLimitedCalls: true` so a 429 reaches the drain, which
   * waits out Retry-After without holding a worker; a client that retries 429s itself also works.
   */
  readonly slack: WebClient;
  readonly store: Store;
  readonly log: Logger;
  readonly policy: Policy;
  readonly shape: Shape;
  /** The watchers' queue: fan-out jobs and outbox drains are added here. */
  readonly queue: WatchQueue;
  /** Present when METRICS_* is configured: idle detection and the alert's chart need it. */
  readonly snapshots?: SnapshotDeps | undefined;
  /**
   * Changes the policy decides (stopping an idle machine) go through the request pipeline: a job and
   * an audit entry, like any request (src/requests/policy-action.ts).
   */
  readonly submit: (action: PolicyAction) => Promise<EnqueueResult>;
  /**
   * A power schedule's firing: a start or stop as the schedule's owner, role checked again, audited
   * with the schedule's id (src/requests/scheduled-action.ts). Absent: schedules fire nothing.
   */
  readonly submitScheduled?: (action: ScheduledAction) => Promise<ScheduledResult>;
  /**
   * Of a tag schedule's machines, the ids its owner may operate: their own (made through gpuops by
   * them), or all of them for an admin (src/requests/scheduled-action.ts). Absent: none.
   */
  readonly operableBy?: (
    owner: { readonly userId: string; readonly channelId: string },
    instanceIds: readonly string[],
  ) => Promise<ReadonlySet<string>>;
  /**
   * Puts a firing the policy refused on the audit trail (a paused schedule, machines not its owner's
   * to operate) as its owner's `refused` entry (src/requests/scheduled-action.ts). Absent: not recorded.
   */
  readonly refusedScheduled?: (refusal: ScheduleRefusal) => Promise<void>;
  /** The bot's own workspace (auth.test): a schedule owner of another one is paused unless the policy allows. */
  readonly botTeamId?: string | undefined;
  /** The bot's own Slack user: who such a change is made by. */
  readonly botUserId: string;
  /** Re-publishes Home tabs when a look changes someone's machines (docs/home.md). */
  readonly home?: HomePublisher | undefined;
  /** The budgets and their months, for the alerts (docs/budgets.md); absent: no budget alerts. */
  readonly budgets?: BudgetWatch | undefined;
  /** Counts a budget alert that could not be said: Slack refused it (its error code) or it was not queued. */
  readonly countBudgetAlertFailed?: ((reason: string) => void) | undefined;
  /** A looked-at project has no cached price list: ask for one (a `catalog.refresh` job, one a minute at most). */
  readonly askForPrices?: ((projectId: string) => Promise<void>) | undefined;
  readonly now?: () => number;
  /** Least time between two Slack calls to one channel or DM; default 1000 ms (about one a second). */
  readonly minIntervalMs?: number;
}

export const DEFAULT_MIN_INTERVAL_MS = 1_000;

export const nowOf = (deps: Pick<WatchDeps, 'now'>): number => (deps.now ?? Date.now)();
