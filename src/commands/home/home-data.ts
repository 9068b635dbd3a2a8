import type { CostEstimate } from '../../pricing/cost.js';
import type { BudgetFigures } from '../../render/budget-gauge.js';
import type { LoginKeys } from '../../render/ssh-login.js';
import type { ApprovalRequest } from '../../store/approval-record.js';
import type { WaitlistEntry } from '../../store/waitlist.js';
import type { GpuCommand } from '../registry.js';

// What a person's Home tab shows, as plain data: the Slack-free renderers (home-view.ts) take it, and
// src/home/ gathers it (from Redis, and the cloud only through a reader it is handed). docs/home.md says where each part comes from.

/** A machine made through gpuops by this person, as gpuops last saw it (watcher, create job, cloud). */
export interface HomeMachine {
  readonly id: string;
  readonly name: string;
  /** The channel it was made in: its buttons act there, as `/gpu start|stop|metrics` typed there. */
  readonly channelId: string;
  readonly projectId?: string | undefined;
  /** Undefined when gpuops does not know it (no watcher's look, no record, the cloud not read). */
  readonly state?: string | undefined;
  readonly type?: string | undefined;
  /** The running price per hour from the cached price list; undefined when not known. */
  readonly cost?: CostEstimate | undefined;
  /** Regions the price list offers its type in (the cloud does not say where a machine runs). */
  readonly regions?: readonly string[] | undefined;
  /** When the watcher first saw it running this time (epoch ms). */
  readonly runningSince?: number | undefined;
  /** When its lease stops it (epoch ms). */
  readonly leaseEndsAt?: number | undefined;
  /** When its state was last seen (epoch ms). */
  readonly seenAt?: number | undefined;
  /** `ssh <user>@<ip>` while the watcher sees it running with an address. */
  readonly ssh?: string | undefined;
}

/** A scheduled start or stop (`/gpu schedule …`), as its store lists it for one person. */
export interface HomeSchedule {
  readonly id: string;
  readonly action: 'start' | 'stop';
  readonly target: string;
  /** When it runs, in words (`every weekday at 19:00`, an ISO time…). */
  readonly when: string;
  readonly channel: string;
}

/** One day of the week so far: this person's machines, and all machines of their projects. */
export interface SpendDay {
  /** YYYY-MM-DD in the digest's time zone. */
  readonly day: string;
  /** The day's start (epoch ms), for the chart's time axis. */
  readonly at: number;
  readonly userUsd: number;
  readonly userGpuHours: number;
  readonly projectUsd: number;
  readonly projectGpuHours: number;
}

export interface ProjectSpend {
  readonly projectId: string;
  readonly name?: string | undefined;
  readonly usd: number;
  readonly gpuHours: number;
}

export interface HomeSpend {
  /** Oldest first, the first being the week's Monday. */
  readonly days: readonly SpendDay[];
  readonly projects: readonly ProjectSpend[];
  /** Some of this person's GPU-hours had no price (type missing from the price list). */
  readonly unpriced: boolean;
  /** The uploaded PNG of the days, when one could be drawn. */
  readonly chartFileId?: string | undefined;
}

/** A button that opens one of the existing forms. */
export interface HomeForm {
  readonly form: string;
  readonly label: string;
}

export interface HomeData {
  readonly userId: string;
  readonly now: number;
  readonly machines: readonly HomeMachine[];
  /** Undefined: this person approves nothing (the section is left out). */
  readonly approvals?: readonly ApprovalRequest<GpuCommand>[] | undefined;
  readonly waitlist: readonly WaitlistEntry[];
  readonly schedules: readonly HomeSchedule[];
  readonly spend: HomeSpend;
  /** This month's budgets the person owns or whose projects they work in; absent or empty: none shown. */
  readonly budgets?: readonly BudgetFigures[] | undefined;
  readonly forms: readonly HomeForm[];
  /** The keys this person added through gpuops, named beside the ssh lines; undefined: not read. */
  readonly loginKeys?: LoginKeys | undefined;
  /** What became of the person's last press, shown on top once. */
  readonly notice?: string | undefined;
}
