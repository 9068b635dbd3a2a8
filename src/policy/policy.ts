import type { GpuCommandKind } from '../commands/registry.js';
import type { OperationClass } from '../commands/spec.js';
import type { PricingPolicy } from '../pricing/cost.js';
import type { LoginUsers } from '../render/ssh-login.js';
import type { RateLimits } from '../store/rate-limiter.js';
import {
  DEFAULT_CLASS_ROLES,
  POLICY_ROLES,
  type PolicyFile,
  type PolicyRole,
  policyFileSchema,
} from './policy-schema.js';

// The policy as the rest of the code reads it: the file validated by policy-schema.ts, normalised to
// camelCase, with its defaults filled in and frozen (docs/policy.md).

export interface RoleGrant {
  readonly users: readonly string[];
  readonly groups: readonly string[];
  readonly channels: readonly string[];
}

export interface LeasePolicy {
  /** Instances costing more than this per hour get a stop time. */
  readonly requiredAbovePerHour: number;
  readonly defaultSeconds: number;
  readonly remindBeforeSeconds: number;
  /** The longest a lease runs from its start through its owner's Extends; approvers may go past it. */
  readonly maxTotalSeconds: number;
}

export interface ApprovalPolicy {
  readonly thresholdPerHour: number;
  readonly always: readonly GpuCommandKind[];
  readonly approvers: { readonly users: readonly string[]; readonly groups: readonly string[] };
  readonly allowSelfApproval: boolean;
  /** `ask`: an unpriced create, start or pool add waits for an approver; `allow`: only known costs count. */
  readonly unknownPrice: 'ask' | 'allow';
  readonly expiresAfterSeconds: number;
  /** Where cards go; undefined means the channel of the request. */
  readonly channel?: string;
  readonly lease?: LeasePolicy;
}

export interface AccessPolicy {
  /** Guests (single- and multi-channel, users.info is_restricted / is_ultra_restricted) may use gpuops. */
  readonly allowGuests: boolean;
  /** Members of any other workspace (Slack Connect, Enterprise Grid) may use gpuops. */
  readonly allowOtherWorkspaces: boolean;
  /** Other workspaces whose members may use gpuops; the bot's own always may. */
  readonly allowedTeams: readonly string[];
  /** Members of any workspace of the bot's own Enterprise Grid organisation (auth.test enterprise_id) may. */
  readonly allowOwnEnterprise: boolean;
}

export interface WatchPolicy {
  readonly pollEverySeconds: number;
  readonly capacityEverySeconds: number;
}

export interface IdlePolicy {
  /** Below this GPU utilisation (percent, every GPU, the whole window) a running instance is idle. */
  readonly thresholdPercent: number;
  readonly windowSeconds: number;
  /** Stop an idle instance nobody answered for this long after its alert; undefined: never. */
  readonly autoStopAfterSeconds?: number;
  readonly checkEverySeconds: number;
}

export interface DigestPolicy {
  readonly enabled: boolean;
  readonly cron: string;
  readonly tz: string;
}

/** A monthly budget (docs/budgets.md). */
export interface BudgetPolicy {
  readonly name: string;
  readonly monthlyUsd: number;
  /** Project ids it covers; empty: every project. */
  readonly projects: readonly string[];
  /** Who approves requests that would take the forecast over it, and gets its alerts. */
  readonly owners: readonly string[];
  /** Where its alerts go. */
  readonly channel?: string;
  /** Percentages of the monthly amount, ascending, at which actual spend alerts. */
  readonly alertAt: readonly number[];
  /** Alert when the month's forecast passes 100 %. */
  readonly forecastAlert: boolean;
  /** Refuse a request that would take the forecast over, instead of asking an owner. */
  readonly hardCap: boolean;
}

export interface Policy {
  /** Where it came from: the file path, or `built-in defaults`. */
  readonly source: string;
  readonly defaultRole: PolicyRole;
  readonly grants: Readonly<Record<PolicyRole, RoleGrant>>;
  readonly classes: Readonly<Record<OperationClass, PolicyRole>>;
  readonly kinds: Readonly<Partial<Record<GpuCommandKind, PolicyRole>>>;
  readonly approvals: ApprovalPolicy;
  readonly access: AccessPolicy;
  readonly audit: { readonly retentionSeconds: number; readonly channel?: string };
  readonly pricing: PricingPolicy;
  readonly watch: WatchPolicy;
  readonly idle: IdlePolicy;
  readonly digest: DigestPolicy;
  /** Requests per person and per channel (src/store/rate-limiter.ts). */
  readonly rateLimits: RateLimits;
  /** Who `ssh` logs in as, shown with a machine's address (src/render/ssh-login.ts). */
  readonly login: LoginUsers;
  /** Monthly budgets, in the file's order. */
  readonly budgets: readonly BudgetPolicy[];
}

export const DEFAULTS_SOURCE = 'built-in defaults';

/** The validated file as the normalised Policy the rest of the code reads. */
export function toPolicy(file: PolicyFile, source: string): Policy {
  const emptyGrant: RoleGrant = { users: [], groups: [], channels: [] };
  const grants = Object.fromEntries(
    POLICY_ROLES.map((role) => [role, file.roles[role] ?? emptyGrant]),
  ) as Record<PolicyRole, RoleGrant>;
  const a = file.approvals;
  return deepFreeze({
    source,
    defaultRole: file.default_role,
    grants,
    classes: { ...DEFAULT_CLASS_ROLES, ...file.permissions.classes },
    kinds: { ...file.permissions.kinds },
    approvals: {
      thresholdPerHour: a.threshold_per_hour,
      always: [...new Set(a.always)],
      approvers: { users: a.approvers.users, groups: a.approvers.groups },
      allowSelfApproval: a.allow_self_approval,
      unknownPrice: a.unknown_price,
      expiresAfterSeconds: a.expires_after,
      ...(a.channel !== undefined ? { channel: a.channel } : {}),
      ...(a.lease
        ? {
            lease: {
              requiredAbovePerHour: a.lease.required_above_per_hour,
              defaultSeconds: a.lease.default,
              remindBeforeSeconds: a.lease.remind_before,
              maxTotalSeconds: a.lease.max_total,
            },
          }
        : {}),
    },
    access: {
      allowGuests: file.access.allow_guests,
      allowOtherWorkspaces: file.access.allow_other_workspaces,
      allowedTeams: file.access.allowed_teams,
      allowOwnEnterprise: file.access.allow_own_enterprise,
    },
    audit: {
      retentionSeconds: file.audit.retention,
      ...(file.audit.channel !== undefined ? { channel: file.audit.channel } : {}),
    },
    pricing: {
      types: Object.fromEntries(
        Object.entries(file.pricing.types).map(([type, t]) => [
          type,
          { gpuType: t.gpu_type, gpuCount: t.gpu_count },
        ]),
      ),
      models: file.pricing.models.map((m) => ({
        prefix: m.prefix,
        gpuType: m.gpu_type,
        ...(m.stem ? { stem: m.stem } : {}),
      })),
      stoppedPrice: file.pricing.stopped_price,
    },
    watch: {
      pollEverySeconds: file.watch.poll_every,
      capacityEverySeconds: file.watch.capacity_every,
    },
    idle: {
      thresholdPercent: file.idle.threshold_percent,
      windowSeconds: file.idle.window,
      ...(file.idle.auto_stop_after !== undefined ? { autoStopAfterSeconds: file.idle.auto_stop_after } : {}),
      checkEverySeconds: file.idle.check_every,
    },
    digest: { enabled: file.digest.enabled, cron: file.digest.cron, tz: file.digest.tz },
    rateLimits: {
      perUser: { requests: file.rate_limits.per_user.requests, perSeconds: file.rate_limits.per_user.per },
      perChannel: {
        requests: file.rate_limits.per_channel.requests,
        perSeconds: file.rate_limits.per_channel.per,
      },
    },
    login: {
      defaultUser: file.login.default_user,
      byType: { ...file.login.by_type },
      byImage: { ...file.login.by_image },
    },
    budgets: Object.entries(file.budgets).map(([name, b]) => ({
      name,
      monthlyUsd: b.monthly_usd,
      projects: [...new Set(b.projects.map((p) => p.toLowerCase()))],
      owners: [...new Set(b.owners)],
      ...(b.channel !== undefined ? { channel: b.channel } : {}),
      alertAt: [...b.alert_at].sort((x, y) => x - y),
      forecastAlert: b.forecast_alert,
      hardCap: b.hard_cap,
    })),
  });
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** The policy with no file: everyone operates and creates below the threshold; deletes need a second person. */
export const DEFAULT_POLICY: Policy = toPolicy(policyFileSchema.parse({}), DEFAULTS_SOURCE);

export type { LoginUsers, PricingPolicy };
