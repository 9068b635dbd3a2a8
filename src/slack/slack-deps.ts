import type { SlashCommand } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import type { RouteTable } from '../cloud/routes.js';
import type { Shape } from '../cloud/shape.js';
import type { Deadline } from '../commands/kit/deadline.js';
import type { GpuCommand } from '../commands/registry.js';
import type { HomeBudgets, HomePublisher, MachineReader } from '../home/home-deps.js';
import type { GpuQueue } from '../jobs/queue.js';
import type { Logger } from '../log/logger.js';
import type { Guardrails } from '../policy/guardrails.js';
import type { ChartFonts } from '../render/render-chart-png.js';
import type { Refused } from '../requests/accept-request.js';
import type { RequestPorts } from '../requests/ports.js';
import type { Sealer } from '../store/sealed.js';
import type { Store } from '../store/store.js';

/** What the listeners need: no cloud client, by design. */
export interface SlackDeps {
  readonly queue: GpuQueue;
  readonly store: Store;
  readonly client: WebClient;
  /** The request pipeline's view of Slack, made from `client` (src/slack/request-ports.ts). */
  readonly ports: RequestPorts;
  readonly log: Logger;
  readonly shape: Shape;
  /** The shape's route table with CLOUD_ROUTES applied: decides which subcommands exist. */
  readonly routes: RouteTable;
  readonly defaultProjectId?: string | undefined;
  /** Opens the form of a command typed without arguments; returns an acknowledgement text if any. */
  /** `access`: the requester's access check, under way; the form opens without waiting long for it. */
  readonly openModal?: (
    command: GpuCommand,
    slash: SlashCommand,
    access?: Promise<Refused | undefined>,
    deadline?: Deadline,
  ) => Promise<{ text?: string } | undefined>;
  /** Seals secrets typed into forms (user data, kubeconfigs) before their job is queued. */
  readonly sealer?: Sealer | undefined;
  /** Counts commands for /metrics. */
  readonly onCommand?: (kind: string) => void;
  /**
   * Roles, approvals and the audit trail (docs/policy.md). The composition root always sets it (the
   * built-in defaults with no policy file); leaving it out turns the checks off, for tests of
   * unrelated features only.
   */
  readonly guardrails: Guardrails;
  /** On a replicated Redis: the check that an added job reached a replica (src/jobs/replicated.ts). */
  readonly replicated?: (() => Promise<void>) | undefined;
  /** On a replicated Redis: why no change can be stored now (no replica), else undefined (degraded mode). */
  readonly degraded?: (() => Promise<string | undefined>) | undefined;
  /** How long an approved request may wait for its job to be stored before it lapses (default 30 min). */
  readonly runWithinMs?: number | undefined;
  /** Publishes Home tabs; default: one built from these deps, without the spend chart's picture. */
  readonly home?: HomePublisher | undefined;
  /** The fonts the default publisher draws the Home tab's spend chart with; none, no picture. */
  readonly homeFonts?: ChartFonts | undefined;
  /**
   * Lists an unwatched project's machines from the cloud for the default publisher, handed over by the
   * composition root where the process has the cloud client; without it they show "state unknown".
   */
  readonly homeMachines?: MachineReader | undefined;
  /** The budgets the default publisher shows as gauges (composed in app/); none, no gauges. */
  readonly homeBudgets?: HomeBudgets | undefined;
  /** Where there is no reader: asks a worker to publish someone's Home again, with the cloud's listing. */
  readonly homeLater?: ((userId: string) => Promise<void>) | undefined;
  /** The bot's own workspace (auth.test team_id): requests from others are refused unless the policy allows. */
  readonly botTeamId?: string | undefined;
  /** The bot's Enterprise Grid organisation (auth.test enterprise_id), if any: see access.allow_own_enterprise. */
  readonly botEnterpriseId?: string | undefined;
}
