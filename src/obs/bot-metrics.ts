import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

// The bot's own Prometheus metrics, served at GET /metrics. One registry per running bot (not the
// library's global one) so two bots in one process, as in tests, never mix their counts.
// docs/operations.md lists every name; keep it in step.

export const METRIC_NAMES = {
  commands: 'gpuops_commands_total',
  jobs: 'gpuops_jobs_total',
  jobDuration: 'gpuops_job_duration_seconds',
  cloudRequests: 'gpuops_cloud_requests_total',
  cloudDuration: 'gpuops_cloud_request_duration_seconds',
  slackErrors: 'gpuops_slack_api_errors_total',
  queueJobs: 'gpuops_queue_jobs',
  approvals: 'gpuops_approvals_total',
  slackAck: 'gpuops_slack_ack_duration_seconds',
  ready: 'gpuops_ready',
  degradedMode: 'gpuops_degraded_mode',
  swept: 'gpuops_sweeper_requests_total',
  approvalsWaiting: 'gpuops_approvals_waiting',
  budgetAlertsFailed: 'gpuops_budget_alerts_failed_total',
  budgetUsd: 'gpuops_budget_usd',
  info: 'gpuops_info',
} as const;

/** How one attempt of a job ended: done, failed for good, or failed and scheduled again. */
export type JobOutcome = 'done' | 'failed' | 'retried';

/** What the sweeper did with an approved request it found: queued it, left it waiting, lapsed it, or dropped a gone record. */
export type SweptOutcome = 'queued' | 'waiting' | 'lapsed' | 'gone';

export interface CloudCallSample {
  /** Which API: infra or platform. */
  readonly api: string;
  readonly operation: string;
  /** HTTP status, or network | timeout | cancelled. */
  readonly status: number | string;
  readonly durationMs: number;
}

/** One budget's month, as `gpuops_budget_usd` shows it. */
export interface BudgetSample {
  readonly name: string;
  readonly monthlyUsd: number;
  readonly actualUsd: number;
  readonly forecastUsd: number;
}

export interface BotMetricsOptions {
  /** Node.js process metrics (CPU, memory, event loop lag, GC); default true. */
  readonly defaultMetrics?: boolean;
  /** Constant labels of gpuops_info. */
  readonly info?: Readonly<Record<string, string>>;
}

export interface BotMetrics {
  readonly registry: Registry;
  commandReceived(subcommand: string): void;
  jobEnded(name: string, outcome: JobOutcome, durationMs: number): void;
  cloudCall(sample: CloudCallSample): void;
  slackApiError(method: string, error: string): void;
  /** An approval request posted (requested) or closed (approved, denied, expired). */
  countApproval(outcome: 'requested' | 'approved' | 'denied' | 'expired'): void;
  /** Job counts by state, read from the queue at each scrape (web and worker roles). */
  watchQueue(read: () => Promise<Readonly<Record<string, number>>>): void;
  /** How long Slack waited for the answer to one POST /slack/events (HTTP mode). */
  slackAnswered(durationMs: number): void;
  /** What one sweeper pass did with the approved requests it found between states. */
  countSwept(counts: Readonly<Partial<Record<SweptOutcome, number>>>): void;
  /** A budget alert that could not be said: Slack's error code, or `queue` when it was not queued. */
  countBudgetAlertFailed(reason: string): void;
  /** Whether /readyz would answer 200 (ready or degraded), read at each scrape. */
  watchReadiness(read: () => Promise<boolean>): void;
  /** Approval requests waiting for a decision and, approved, for their job to be queued; read at each scrape. */
  watchApprovals(read: () => Promise<{ readonly decision: number; readonly queue: number }>): void;
  /** Each budget's month (its amount, the spend so far and the forecast), read at each scrape (worker role). */
  watchBudgets(read: () => Promise<readonly BudgetSample[]>): void;
  /** Replicated Redis only: whether changes are refused for want of a replica, read at each scrape. */
  watchDegradedMode(read: () => Promise<boolean>): void;
  /** The text exposition and its content type. */
  render(): Promise<{ contentType: string; body: string }>;
}

const JOB_BUCKETS = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];
const CLOUD_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
// Slack gives up on an answer after 3 s: the buckets are finest just below it.
const ACK_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 1.5, 2, 2.5, 3, 5];

export function createBotMetrics(options: BotMetricsOptions = {}): BotMetrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });

  const commands = new Counter({
    name: METRIC_NAMES.commands,
    help: '/gpu commands accepted by the listener, by subcommand',
    labelNames: ['subcommand'] as const,
    registers: [registry],
  });
  const jobs = new Counter({
    name: METRIC_NAMES.jobs,
    help: 'Job attempts that ended, by job name and outcome (done, failed, retried)',
    labelNames: ['name', 'outcome'] as const,
    registers: [registry],
  });
  const jobDuration = new Histogram({
    name: METRIC_NAMES.jobDuration,
    help: 'How long one job attempt ran, by job name and outcome',
    labelNames: ['name', 'outcome'] as const,
    buckets: JOB_BUCKETS,
    registers: [registry],
  });
  const cloudRequests = new Counter({
    name: METRIC_NAMES.cloudRequests,
    help: 'HTTP tries to the cloud APIs, by api, operation and status (HTTP code, network, timeout, cancelled)',
    labelNames: ['api', 'operation', 'status'] as const,
    registers: [registry],
  });
  const cloudDuration = new Histogram({
    name: METRIC_NAMES.cloudDuration,
    help: 'Latency of one HTTP try to the cloud APIs, by api, operation and status',
    labelNames: ['api', 'operation', 'status'] as const,
    buckets: CLOUD_BUCKETS,
    registers: [registry],
  });
  const slackErrors = new Counter({
    name: METRIC_NAMES.slackErrors,
    help: 'Slack Web API calls that failed, by method and error (Slack error code, http_<status>, network)',
    labelNames: ['method', 'error'] as const,
    registers: [registry],
  });
  const approvals = new Counter({
    name: METRIC_NAMES.approvals,
    help: 'Approval requests by outcome: requested (card posted), approved, denied, expired',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const slackAck = new Histogram({
    name: METRIC_NAMES.slackAck,
    help: 'From the arrival of a POST /slack/events to the end of its answer (HTTP mode): Slack gives up after 3 s',
    buckets: ACK_BUCKETS,
    registers: [registry],
  });
  const swept = new Counter({
    name: METRIC_NAMES.swept,
    help: 'Approved requests the sweeper found between states, by what it did: queued, waiting (no replica yet), lapsed, gone',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const budgetAlertsFailed = new Counter({
    name: METRIC_NAMES.budgetAlertsFailed,
    help: 'Budget alerts that could not be said, by reason: the Slack error code of a refused post, or queue',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const info = new Gauge({
    name: METRIC_NAMES.info,
    help: 'Always 1; labels say what runs here',
    labelNames: Object.keys(options.info ?? {}),
    registers: [registry],
  });
  info.set({ ...options.info }, 1);

  let readQueue: (() => Promise<Readonly<Record<string, number>>>) | undefined;
  new Gauge({
    name: METRIC_NAMES.queueJobs,
    help: 'Jobs in the queue by state, read at scrape time',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      if (!readQueue) return;
      this.reset();
      try {
        const counts = await withTimeout(readQueue(), 1_000);
        for (const [state, n] of Object.entries(counts)) this.set({ state }, n);
      } catch {
        // Redis is down: /readyz says so; /metrics still answers with everything else.
      }
    },
  });

  let readReady: (() => Promise<boolean>) | undefined;
  new Gauge({
    name: METRIC_NAMES.ready,
    help: '1 when /readyz would answer 200 (ready or degraded), 0 when it would answer 503; read at scrape time',
    registers: [registry],
    async collect() {
      if (!readReady) return;
      this.set((await withTimeout(readReady(), 3_000).catch(() => false)) ? 1 : 0);
    },
  });
  let readApprovals: (() => Promise<{ readonly decision: number; readonly queue: number }>) | undefined;
  new Gauge({
    name: METRIC_NAMES.approvalsWaiting,
    help: 'Approval requests waiting, by stage: decision (pending, not expired) or queue (approved, job not yet queued); read at scrape time',
    labelNames: ['stage'] as const,
    registers: [registry],
    async collect() {
      if (!readApprovals) return;
      this.reset();
      try {
        const { decision, queue } = await withTimeout(readApprovals(), 1_000);
        this.set({ stage: 'decision' }, decision);
        this.set({ stage: 'queue' }, queue);
      } catch {
        // Redis is down: gpuops_ready says so.
      }
    },
  });
  let readBudgets: (() => Promise<readonly BudgetSample[]>) | undefined;
  new Gauge({
    name: METRIC_NAMES.budgetUsd,
    help: "Each budget's month in US dollars, by figure: budget (the monthly amount), actual (spent so far), forecast (to the month's end); read at scrape time",
    labelNames: ['budget', 'figure'] as const,
    registers: [registry],
    async collect() {
      if (!readBudgets) return;
      this.reset();
      try {
        for (const b of await withTimeout(readBudgets(), 2_000)) {
          this.set({ budget: b.name, figure: 'budget' }, b.monthlyUsd);
          this.set({ budget: b.name, figure: 'actual' }, b.actualUsd);
          this.set({ budget: b.name, figure: 'forecast' }, b.forecastUsd);
        }
      } catch {
        // Redis does not answer: gpuops_ready says so.
      }
    },
  });
  let readDegraded: (() => Promise<boolean>) | undefined;
  new Gauge({
    name: METRIC_NAMES.degradedMode,
    help: '1 while changes are refused because Redis has fewer replicas than REDIS_WAIT_REPLICAS (Sentinel or Cluster only)',
    registers: [registry],
    async collect() {
      if (!readDegraded) return;
      this.reset();
      try {
        this.set((await withTimeout(readDegraded(), 1_000)) ? 1 : 0);
      } catch {
        // Redis does not answer: gpuops_ready says so.
      }
    },
  });

  return {
    registry,
    commandReceived: (subcommand) => commands.inc({ subcommand }),
    jobEnded(name, outcome, durationMs) {
      jobs.inc({ name, outcome });
      jobDuration.observe({ name, outcome }, Math.max(0, durationMs) / 1000);
    },
    cloudCall({ api, operation, status, durationMs }) {
      const labels = { api, operation, status: String(status) };
      cloudRequests.inc(labels);
      cloudDuration.observe(labels, Math.max(0, durationMs) / 1000);
    },
    slackApiError: (method, error) => slackErrors.inc({ method, error }),
    countApproval: (outcome) => approvals.inc({ outcome }),
    watchQueue(read) {
      readQueue = read;
    },
    slackAnswered: (durationMs) => slackAck.observe(Math.max(0, durationMs) / 1000),
    countBudgetAlertFailed(reason) {
      budgetAlertsFailed.inc({ reason });
    },
    countSwept(counts) {
      for (const [outcome, n] of Object.entries(counts)) if (n) swept.inc({ outcome }, n);
    },
    watchReadiness(read) {
      readReady = read;
    },
    watchApprovals(read) {
      readApprovals = read;
    },
    watchBudgets(read) {
      readBudgets = read;
    },
    watchDegradedMode(read) {
      readDegraded = read;
    },
    async render() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timed out')), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
