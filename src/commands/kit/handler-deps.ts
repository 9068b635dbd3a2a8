import type { WebClient } from '@slack/web-api';
import type { InfraClient, PlatformClient } from '../../cloud/index.js';
import type { Shape } from '../../cloud/shape.js';
import type { Logger } from '../../log/logger.js';
import type { LoginUsers } from '../../render/ssh-login.js';
import type { SnapshotDeps } from '../../snapshot/take-snapshot.js';
import type { Sealer } from '../../store/sealed.js';
import type { Store } from '../../store/store.js';
import type { MoneyPort } from './money-port.js';
import type { ReplyPort } from './reply-port.js';
import type { ScheduleTimers } from './schedule-timers.js';

/** What a job handler may touch, built once by the composition root. */
export interface HandlerDeps {
  readonly cloud: InfraClient;
  readonly platform?: PlatformClient | undefined;
  /** Present when METRICS_* is configured: what `/gpu metrics` needs. */
  readonly snapshots?: SnapshotDeps | undefined;
  readonly slack: WebClient;
  readonly store: Store;
  readonly log: Logger;
  readonly shape: Shape;
  readonly defaultProjectId?: string | undefined;
  /** Answers the requester privately or edits their message, with fallbacks (src/slack/reply-port.ts). */
  readonly reply: ReplyPort;
  /** Who to log in as on a machine (the policy's `login`); absent: the built-in default user. */
  readonly login?: LoginUsers | undefined;
  /** Unseals the secrets of form requests (user data, kubeconfigs); see src/store/sealed.ts. */
  readonly sealer?: Sealer | undefined;
  /** The job schedulers that fire `/gpu schedule …` (the watch queue); absent where none run. */
  readonly schedules?: ScheduleTimers | undefined;
  /** The spend ledger and the budgets, for `/gpu spend` and `/gpu budget`; absent where none is kept. */
  readonly money?: MoneyPort | undefined;
  readonly timing?: Partial<WorkerTiming>;
  readonly now?: () => number;
}

export interface WorkerTiming {
  /** First wait between polls for a state to settle; doubles up to pollMaxMs. */
  readonly pollStartMs: number;
  readonly pollMaxMs: number;
  /** How long a state may take to settle before the job reports it as stuck. */
  readonly settleTimeoutMs: number;
  /**
   * Progress edits of a first attempt wait this long from its start: a job that ends sooner goes from
   * "Queued" straight to its answer (two Slack calls), a longer one then shows its latest step.
   */
  readonly progressQuietMs: number;
}

export const DEFAULT_TIMING: WorkerTiming = {
  pollStartMs: 1_000,
  pollMaxMs: 15_000,
  settleTimeoutMs: 30 * 60_000,
  progressQuietMs: 1_000,
};
