import { z } from 'zod';
import { ALWAYS_APPROVED_KINDS, GPU_COMMAND_KINDS, type GpuCommandKind } from '../commands/registry.js';
import { OPERATION_CLASSES, type OperationClass } from '../commands/spec.js';
import { DEFAULT_LOGIN_USER } from '../render/ssh-login.js';

// The policy file (YAML at GPUOPS_POLICY): who may do what, what waits for an approver, how long the
// audit trail is kept. Snake_case in the file, a normalised camelCase `Policy` in code. Every setting
// has a safe default, so an empty file and no file mean the same thing (docs/policy.md). This file is the
// file's schema; policy.ts turns a validated file into the `Policy` the code reads.

export const POLICY_ROLES = ['viewer', 'operator', 'admin'] as const;
export type PolicyRole = (typeof POLICY_ROLES)[number];
export const ROLE_RANK: Readonly<Record<PolicyRole, number>> = { viewer: 0, operator: 1, admin: 2 };

export const DURATION_RULE =
  'a duration is a whole number with a unit s, m, h, d or w, such as 30m, 8h, 1h30m or 30d';
const DURATION_UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 } as const;

/** `30m` → 1800, `1h30m` → 5400; undefined when not a positive duration. */
export function parsePolicyDuration(text: string): number | undefined {
  const value = text.trim().toLowerCase();
  if (!/^(?:[0-9]{1,6}[smhdw])+$/.test(value)) return undefined;
  let seconds = 0;
  for (const m of value.matchAll(/([0-9]+)([smhdw])/g)) {
    seconds += Number(m[1]) * DURATION_UNIT_SECONDS[m[2] as keyof typeof DURATION_UNIT_SECONDS];
  }
  return seconds > 0 ? seconds : undefined;
}

export const USER_ID_RULE =
  'a Slack user id starts with U or W, such as U012AB3CDE (profile → ⋮ → Copy member ID)';
export const GROUP_ID_RULE = 'a Slack user group id starts with S, such as S0614TZR7';
export const TEAM_ID_RULE =
  'a Slack workspace id starts with T, such as T012AB3CDE (auth.test or the workspace URL)';
export const CHANNEL_ID_RULE =
  'a Slack channel id starts with C or G, such as C0123ABCDEF (shown at the bottom of the channel details)';

const userId = z.string({ error: USER_ID_RULE }).regex(/^[UW][A-Z0-9]{2,}$/, { error: USER_ID_RULE });
const groupId = z.string({ error: GROUP_ID_RULE }).regex(/^S[A-Z0-9]{2,}$/, { error: GROUP_ID_RULE });
const teamId = z.string({ error: TEAM_ID_RULE }).regex(/^T[A-Z0-9]{2,}$/, { error: TEAM_ID_RULE });
const channelId = z
  .string({ error: CHANNEL_ID_RULE })
  .regex(/^[CG][A-Z0-9]{2,}$/, { error: CHANNEL_ID_RULE });

export const roleSchema = z.enum(POLICY_ROLES, {
  error: (issue) => `unknown role ${JSON.stringify(issue.input)}: roles are viewer, operator and admin`,
});
export const kindSchema = z.enum(GPU_COMMAND_KINDS, {
  error: (issue) =>
    `unknown kind ${JSON.stringify(issue.input)}: a kind is a /gpu subcommand with its words joined by dots, such as rm, fs.rm, k8s.pool.rm or slurm.sudo (docs/commands.md)`,
});
const classSchema = z.enum(OPERATION_CLASSES, {
  error: (issue) =>
    `unknown operation class ${JSON.stringify(issue.input)}: classes are ${OPERATION_CLASSES.join(', ')}`,
});
const duration = z
  .string({ error: DURATION_RULE })
  .refine((v) => parsePolicyDuration(v) !== undefined, { error: DURATION_RULE })
  .transform((v) => parsePolicyDuration(v) ?? 0);
const usdPerHour = (what: string) =>
  z
    .number({
      error: (issue) =>
        `${what} ${issue.input === undefined ? 'is required: ' : 'is '}a number of US dollars per hour, such as 10 or 2.5`,
    })
    .min(0, { error: `${what} must be 0 or more US dollars per hour` })
    .max(1_000_000, { error: `${what} must be at most 1000000 US dollars per hour` });
const bool = z.boolean({ error: 'expected true or false' });

const grantSchema = z.strictObject({
  users: z.array(userId).default([]),
  groups: z.array(groupId).default([]),
  channels: z.array(channelId).default([]),
});

/** Destructive kinds and Slurm sudo grants wait for an approver unless the policy lists others. */
export const DEFAULT_ALWAYS: readonly GpuCommandKind[] = ALWAYS_APPROVED_KINDS;
export const DEFAULT_THRESHOLD_PER_HOUR = 10;
export const DEFAULT_EXPIRES_AFTER_SECONDS = 24 * 3600;
export const DEFAULT_LEASE_SECONDS = 8 * 3600;
export const DEFAULT_REMIND_BEFORE_SECONDS = 30 * 60;
/** The longest a lease may run, from its start, by its owner's own extensions. */
export const DEFAULT_LEASE_MAX_TOTAL_SECONDS = 7 * 86_400;
export const DEFAULT_AUDIT_RETENTION_SECONDS = 30 * 86_400;
export const DEFAULT_ROLE: PolicyRole = 'operator';
export const DEFAULT_CLASS_ROLES: Readonly<Record<OperationClass, PolicyRole>> = {
  read: 'viewer',
  operate: 'operator',
  create: 'operator',
  destroy: 'operator',
  admin: 'admin',
};

const leaseSchema = z
  .strictObject({
    required_above_per_hour: usdPerHour('lease.required_above_per_hour'),
    default: duration.default(DEFAULT_LEASE_SECONDS),
    remind_before: duration.default(DEFAULT_REMIND_BEFORE_SECONDS),
    max_total: duration.default(DEFAULT_LEASE_MAX_TOTAL_SECONDS),
  })
  .superRefine((lease, ctx) => {
    if (lease.max_total < lease.default) {
      ctx.addIssue({
        code: 'custom',
        path: ['max_total'],
        message: 'lease.max_total must be at least lease.default, or no lease could start',
      });
    }
    if (lease.remind_before >= lease.default) {
      ctx.addIssue({
        code: 'custom',
        path: ['remind_before'],
        message:
          'lease.remind_before must be shorter than lease.default, or the reminder comes before the lease starts',
      });
    }
  });

const approvalsSchema = z.strictObject({
  threshold_per_hour: usdPerHour('threshold_per_hour').default(DEFAULT_THRESHOLD_PER_HOUR),
  always: z
    .array(kindSchema, { error: 'always is a list of kinds, such as [rm, fs.rm, slurm.sudo]' })
    .default([...DEFAULT_ALWAYS]),
  approvers: grantSchema.omit({ channels: true }).prefault({}),
  allow_self_approval: bool.default(false),
  /** What an operation whose price cannot be worked out does: wait for an approver (ask), or not (allow). */
  unknown_price: z
    .enum(['ask', 'allow'], { error: 'unknown_price is ask (wait for an approver) or allow' })
    .default('ask'),
  expires_after: duration.default(DEFAULT_EXPIRES_AFTER_SECONDS),
  channel: channelId.optional(),
  lease: leaseSchema.optional(),
});

const pricingSchema = z.strictObject({
  /** Exact instance type names → their GPUs, ahead of the name rules of src/pricing/instance-types.ts. */
  types: z
    .record(
      z.string().min(1),
      z.strictObject({
        gpu_type: z.string({ error: 'gpu_type is the platform API gpu_type, such as H100_SXM5_80GB' }).min(1),
        gpu_count: z
          .number({ error: 'gpu_count is a whole number of GPUs per machine' })
          .int({ error: 'gpu_count is a whole number of GPUs per machine' })
          .min(0, { error: 'gpu_count must be 0 or more' })
          .max(1024, { error: 'gpu_count must be at most 1024' }),
      }),
    )
    .default({}),
  /** Extra model prefixes (`b200` → B200_180GB), consulted before the built-in table. */
  models: z
    .array(
      z.strictObject({
        prefix: z.string().min(1),
        gpu_type: z.string().min(1),
        /** The type names' stem (`b200-hgx-180gb`), so the price list's types can be named. */
        stem: z
          .string()
          .regex(/^[a-z0-9][a-z0-9-]*$/, {
            error: 'stem is the start of the type names, lowercase, such as b200-hgx-180gb',
          })
          .optional(),
      }),
    )
    .default([]),
  /** Whether stopped_price_per_hour is per machine (default) or per GPU. */
  stopped_price: z
    .enum(['per_instance', 'per_gpu'], { error: 'stopped_price is per_instance or per_gpu' })
    .default('per_instance'),
});

export const DEFAULT_WATCH_POLL_SECONDS = 30;
export const DEFAULT_CAPACITY_CHECK_SECONDS = 60;
export const DEFAULT_IDLE_THRESHOLD_PERCENT = 5;
export const DEFAULT_IDLE_WINDOW_SECONDS = 30 * 60;
export const DEFAULT_IDLE_CHECK_SECONDS = 5 * 60;
export const DEFAULT_DIGEST_CRON = '0 9 * * *';
export const DEFAULT_DIGEST_TZ = 'UTC';

export const CRON_RULE =
  'a cron schedule is five fields (minute hour day-of-month month day-of-week), such as "0 9 * * *" for 09:00 every day or "30 8 * * 1-5" for 08:30 on weekdays';
const cronSchema = z
  .string({ error: CRON_RULE })
  .refine((v) => /^(?:[0-9*,/?LW#A-Za-z-]+\s+){4,5}[0-9*,/?LW#A-Za-z-]+$/.test(v.trim()), {
    error: CRON_RULE,
  })
  .transform((v) => v.trim().replace(/\s+/g, ' '));
export const TZ_RULE = 'a time zone is an IANA name such as UTC, Europe/Paris or America/New_York';
const tzSchema = z.string({ error: TZ_RULE }).refine(
  (v) => {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: v });
      return true;
    } catch {
      return false;
    }
  },
  { error: TZ_RULE },
);

/** How often the watchers look (docs/watch.md). */
const watchSchema = z.strictObject({
  poll_every: duration.default(DEFAULT_WATCH_POLL_SECONDS),
  capacity_every: duration.default(DEFAULT_CAPACITY_CHECK_SECONDS),
});

/** When a running GPU instance counts as idle, and what happens then (docs/watch.md). */
const idleSchema = z.strictObject({
  threshold_percent: z
    .number({ error: 'threshold_percent is a GPU utilisation in percent, such as 5' })
    .min(0, { error: 'threshold_percent must be 0 or more' })
    .max(100, { error: 'threshold_percent must be at most 100' })
    .default(DEFAULT_IDLE_THRESHOLD_PERCENT),
  window: duration.default(DEFAULT_IDLE_WINDOW_SECONDS),
  auto_stop_after: duration.optional(),
  check_every: duration.default(DEFAULT_IDLE_CHECK_SECONDS),
});

/** Who may send requests and press buttons at all, before roles: guests and other workspaces. */
const accessSchema = z.strictObject({
  allow_guests: bool.default(false),
  allow_other_workspaces: bool.default(false),
  allowed_teams: z
    .array(teamId, { error: 'allowed_teams is a list of workspace ids, such as [T012AB3CDE]' })
    .default([]),
  /** Members of any workspace of the bot's own Enterprise Grid organisation count as its own. */
  allow_own_enterprise: bool.default(false),
});

export const DEFAULT_RATE_PER_USER = 30;
export const DEFAULT_RATE_PER_CHANNEL = 60;
export const DEFAULT_RATE_WINDOW_SECONDS = 60;

const RATE_RULE = 'requests is a whole number of requests (0 for no limit), such as 30';
/** At most `requests` requests that would queue something in each window of `per`. */
const rateSchema = (requests: number) =>
  z
    .strictObject({
      requests: z.number({ error: RATE_RULE }).int({ error: RATE_RULE }).min(0, { error: RATE_RULE }),
      per: duration.default(DEFAULT_RATE_WINDOW_SECONDS),
    })
    .prefault({ requests });

/** One noisy person or channel cannot starve the rest (docs/policy.md). */
const rateLimitsSchema = z.strictObject({
  per_user: rateSchema(DEFAULT_RATE_PER_USER),
  per_channel: rateSchema(DEFAULT_RATE_PER_CHANNEL),
});

/** The daily digest of every watching channel (docs/watch.md). */
const digestSchema = z.strictObject({
  enabled: bool.default(true),
  cron: cronSchema.default(DEFAULT_DIGEST_CRON),
  tz: tzSchema.default(DEFAULT_DIGEST_TZ),
});

export const LOGIN_USER_RULE =
  'a login user is a POSIX user name: a lowercase letter or _, then lowercase letters, digits, _ or -, at most 32 characters, such as ubuntu or root';
const loginUser = z
  .string({ error: LOGIN_USER_RULE })
  .regex(/^[a-z_][a-z0-9_-]{0,31}$/, { error: LOGIN_USER_RULE });
const loginMap = (what: string, example: string) =>
  z
    .record(z.string().min(1, { error: `${what} names must not be empty` }), loginUser, {
      error: `${what} maps ${what} names to login users, such as { ${example}: root }`,
    })
    .default({});

/** Who `ssh` logs in as on a machine gpuops shows (docs/policy.md): per image, then type, then default. */
const loginSchema = z.strictObject({
  default_user: loginUser.default(DEFAULT_LOGIN_USER),
  by_type: loginMap('by_type', 'h100-hgx-80gb.8x'),
  by_image: loginMap('by_image', 'rocky9-cuda12'),
});

export const DEFAULT_BUDGET_ALERT_AT = [50, 80, 100] as const;
export const BUDGET_NAME_RULE = 'a budget name is 1 to 40 letters, digits, - or _, such as ml-team';
const ALERT_AT_RULE =
  'an alert threshold is a whole percentage of the monthly amount from 1 to 1000, such as 80';
const projectId = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, {
  error: (issue) =>
    `unknown project ${JSON.stringify(issue.input)}: a project is named by its id, a UUID such as 3c1d0e2f-5a6b-4c7d-8e9f-0a1b2c3d4e5f (\`/gpu project\` shows it)`,
});
const alertPercent = z
  .number({ error: ALERT_AT_RULE })
  .int({ error: ALERT_AT_RULE })
  .min(1, { error: ALERT_AT_RULE })
  .max(1000, { error: ALERT_AT_RULE });

/** A monthly budget (docs/budgets.md): what it covers, who owns it, when it alerts, whether it refuses. */
const budgetSchema = z.strictObject({
  monthly_usd: z
    .number({
      error: (issue) =>
        `monthly_usd ${issue.input === undefined ? 'is required: the budget in US dollars a month, a number above 0 such as 40000' : 'is the budget in US dollars a month, a number above 0 such as 40000'}`,
    })
    .gt(0, { error: 'monthly_usd must be more than 0 US dollars a month' })
    .max(1_000_000_000, { error: 'monthly_usd must be at most 1000000000 US dollars a month' }),
  /** Empty or absent: every project. */
  projects: z.array(projectId).default([]),
  owners: z.array(userId).min(1, {
    error:
      'a budget needs at least one owner: the Slack users who approve requests over it and get its alerts',
  }),
  channel: channelId.optional(),
  alert_at: z
    .array(alertPercent)
    .superRefine((list, ctx) => {
      const twice = list.find((p, i) => list.indexOf(p) !== i);
      if (twice !== undefined) {
        ctx.addIssue({ code: 'custom', message: `alert_at lists ${twice} twice; list each threshold once` });
      }
    })
    .default([...DEFAULT_BUDGET_ALERT_AT]),
  forecast_alert: bool.default(true),
  hard_cap: bool.default(false),
});

const budgetsSchema = z
  .record(z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, { error: BUDGET_NAME_RULE }), budgetSchema, {
    error: (issue) =>
      issue.code === 'invalid_key'
        ? BUDGET_NAME_RULE
        : 'budgets maps budget names to budgets, such as { ml-team: { monthly_usd: 40000, owners: [U012AB3CDE] } }',
  })
  .default({});

/** The file as written: snake_case, strict (an unknown key is an error, so a typo is not ignored). */
export const policyFileSchema = z.strictObject(
  {
    version: z.literal(1, { error: 'version is 1 (or left out)' }).optional(),
    default_role: roleSchema.default(DEFAULT_ROLE),
    roles: z.partialRecord(roleSchema, grantSchema).default({}),
    permissions: z
      .strictObject({
        classes: z.partialRecord(classSchema, roleSchema).default({}),
        kinds: z.partialRecord(kindSchema, roleSchema).default({}),
      })
      .prefault({}),
    approvals: approvalsSchema.prefault({}),
    access: accessSchema.prefault({}),
    audit: z
      .strictObject({
        retention: duration.default(DEFAULT_AUDIT_RETENTION_SECONDS),
        channel: channelId.optional(),
      })
      .prefault({}),
    pricing: pricingSchema.prefault({}),
    watch: watchSchema.prefault({}),
    idle: idleSchema.prefault({}),
    digest: digestSchema.prefault({}),
    rate_limits: rateLimitsSchema.prefault({}),
    login: loginSchema.prefault({}),
    budgets: budgetsSchema,
  },
  { error: 'the policy file is a mapping of settings (key: value lines), see docs/policy.md' },
);
export type PolicyFile = z.infer<typeof policyFileSchema>;
