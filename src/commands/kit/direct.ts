import type { KnownBlock } from '@slack/types';
import type { RouteTable } from '../../cloud/routes.js';
import type { Shape } from '../../cloud/shape.js';
import type { PricingPolicy } from '../../pricing/cost.js';
import type { ApprovalRequest } from '../../store/approvals.js';
import type { Audit } from '../../store/audit.js';
import type { Store } from '../../store/store.js';
import type { CommandOf, DirectKind, GpuCommand } from '../registry.js';

// What a subcommand the listener answers itself (`delivery: 'direct'`) gets: the request's place,
// the store, and what the policy says, as plain values and functions the caller derives from it.

export interface DirectReply {
  readonly text: string;
  readonly blocks?: KnownBlock[];
}

/** The watchers' settings, in the policy's terms, for what `/gpu watch` and the waitlist say. */
export interface WatchSettings {
  readonly pollEverySeconds: number;
  readonly capacityEverySeconds: number;
  readonly idleThresholdPercent: number;
  readonly idleWindowSeconds: number;
  readonly digest: { readonly enabled: boolean; readonly cron: string; readonly tz: string };
}

export interface DirectContext {
  readonly channelId: string;
  readonly userId: string;
  readonly store: Store;
  readonly shape: Shape;
  readonly routes: RouteTable;
  readonly defaultProjectId?: string | undefined;
  readonly watch: WatchSettings;
  readonly audit: Audit;
  /** The policy's own instance types and GPU models, so a type it names counts as known. */
  readonly pricing?: PricingPolicy;
  /** The requests this person may decide, and their own that wait for someone else. */
  approvalsFor(userId: string): Promise<{
    readonly mine: readonly ApprovalRequest<GpuCommand>[];
    readonly own: readonly ApprovalRequest<GpuCommand>[];
  }>;
}

/** The listener's answer to one direct kind. */
export type AnswerFor<K extends DirectKind> = (
  command: CommandOf<K>,
  ctx: DirectContext,
) => Promise<DirectReply>;

/** Answers of some kinds, as a family exports them. */
export type Answers = { readonly [K in DirectKind]?: AnswerFor<K> };

/** Each text as its own mrkdwn section. */
export const sections = (texts: readonly string[]): KnownBlock[] =>
  texts.map((text) => ({ type: 'section', text: { type: 'mrkdwn', text } }));

/** How long a listener waits for Redis before it answers that it could not look. */
export const REDIS_MS = 1_500;

/** The channel's project: its binding, else the deployment's default. */
export async function currentProject(
  ctx: Pick<DirectContext, 'store' | 'channelId' | 'defaultProjectId'>,
  deadline: <T>(p: Promise<T>) => Promise<T>,
): Promise<{ projectId: string; projectName?: string } | undefined> {
  const binding = await deadline(ctx.store.projectOf(ctx.channelId));
  if (binding)
    return { projectId: binding.projectId, ...(binding.name ? { projectName: binding.name } : {}) };
  return ctx.defaultProjectId ? { projectId: ctx.defaultProjectId } : undefined;
}
