import type { WebClient } from '@slack/web-api';
import type { RouteTable } from '../cloud/routes.js';
import type { Shape } from '../cloud/shape.js';
import type { GpuCommand } from '../commands/registry.js';
import type { Logger } from '../log/logger.js';
import type { Policy } from '../policy/policy.js';
import type { BudgetFigures } from '../render/budget-gauge.js';
import type { ChartFonts } from '../render/render-chart-png.js';
import type { Approvals } from '../store/approvals.js';
import type { Catalog } from '../store/catalog-cache.js';
import type { Leases } from '../store/leases.js';
import type { Store } from '../store/store.js';
import type { ProjectSnapshot } from '../store/watch-snapshots.js';

/** A machine as the cloud listed it, for the Home tab of a project no channel watches. */
export interface ListedMachine {
  readonly id: string;
  readonly name: string;
  readonly state: string;
  readonly type: string;
  /** Its address, where the cloud gives one. */
  readonly ip?: string | undefined;
}

/** One project's machines as the cloud listed them, and when (epoch ms). */
export interface MachineListing {
  readonly machines: readonly ListedMachine[];
  readonly listedAt: number;
}

/**
 * Reads a project's machines from the cloud for the Home tab: bounded in time and cached briefly by
 * whoever implements it (the composition root, src/app/home-machines.ts); undefined when the cloud did
 * not answer in time. A listing begun before `after` (epoch ms: a job changed a machine then) is not
 * served from the cache. The home layer never holds a cloud client.
 */
export type MachineReader = (
  projectId: string,
  options?: { readonly after?: number | undefined },
) => Promise<MachineListing | undefined>;

/**
 * What building and publishing a Home tab needs: Redis, Slack's Web API, the policy, and where the
 * process has one, a reader of the cloud's machines for projects no channel watches.
 */
export interface HomeDeps {
  readonly store: Store;
  readonly client: WebClient;
  readonly log: Logger;
  readonly policy: Policy;
  readonly approvals: Approvals<GpuCommand>;
  readonly leases: Leases;
  /** The groups among `groups` the person is in (approvers can be user groups). */
  readonly groupsOf: (userId: string, groups: readonly string[]) => Promise<readonly string[]>;
  /** Which forms exist in this API shape. */
  readonly shape: Shape;
  readonly routes: RouteTable;
  readonly defaultProjectId?: string | undefined;
  /**
   * Without it (a listener-only process), machines of unwatched projects show "state unknown", and
   * `publishLater` asks a worker, which has the reader, to publish the Home again.
   */
  readonly readMachines?: MachineReader | undefined;
  readonly publishLater?: ((userId: string) => Promise<void>) | undefined;
  /** Without fonts the spend chart is left out (the figures stay). */
  readonly fonts?: ChartFonts | undefined;
  /** The policy's budgets and their month (composed in app/ from the spend ledger); absent: none shown. */
  readonly budgets?: HomeBudgets | undefined;
  readonly now?: () => number;
}

/** Each budget with who owns it and what it covers (empty `projects`: every project), at `now`. */
export type HomeBudgets = (now: number) => Promise<
  ReadonlyArray<{
    readonly owners: readonly string[];
    readonly projects: readonly string[];
    readonly status: BudgetFigures;
  }>
>;

/** Publishes Home tabs: the listener on app_home_opened and presses, the watcher on changes. */
export interface HomePublisher {
  /** Builds and publishes `userId`'s Home tab now; `notice` is shown on top once. */
  publish(userId: string, options?: { readonly notice?: string }): Promise<void>;
}

/** What the Home tab reads of one project: the watcher's last look and the cached catalogue. */
export interface ProjectView {
  /** Its name, as `/gpu project use` bound it to a channel one of the person's machines was made in. */
  readonly name?: string | undefined;
  readonly snapshot: ProjectSnapshot | undefined;
  readonly catalog: Catalog | undefined;
  /** Read from the cloud as the Home opened, when no channel watches the project. */
  readonly listing?: MachineListing | undefined;
  /** When a job of gpuops last changed one of its machines: a look from before shows no state. */
  readonly changedAt?: number | undefined;
}
