import { commandPath, type GpuCommandKind, operationClassOf } from '../commands/registry.js';
import { type CostEstimate, formatUsd } from '../pricing/cost.js';
import type { LeasePolicy, Policy } from './policy.js';
import { POLICY_ROLES, type PolicyRole, ROLE_RANK } from './policy-schema.js';

// Pure decisions over a Policy: which role a person has, whether they may run a kind, whether it waits
// for an approver, and whether a given person may approve. Messages are Slack mrkdwn sentences.

export interface Who {
  readonly policy: Policy;
  readonly userId: string;
  /** The Slack user groups (S…) the person belongs to; only groups named in the policy matter. */
  readonly userGroups: readonly string[];
  /**
   * The channel whose message the person typed or clicked in, as Slack's signed payload names it: a
   * role granted to that channel counts for them. Left out wherever nothing was typed or clicked in a
   * channel (the Home tab, a workflow step, a schedule's firing): the person's own roles decide there.
   */
  readonly channelId?: string;
}

export interface RoleOf {
  readonly role: PolicyRole;
  /** Where the role comes from, in words: `the default for everyone`, `<#C123>`, … */
  readonly via: string;
}

/** The highest role a person gets directly, through any of their groups, or through the channel. */
export function roleOf({ policy, userId, userGroups, channelId }: Who): RoleOf {
  let best: RoleOf = { role: policy.defaultRole, via: 'the default for everyone' };
  let granted = false;
  // A grant equal to the default still explains the role better than "the default".
  const consider = (role: PolicyRole, via: string) => {
    if (ROLE_RANK[role] > ROLE_RANK[best.role] || (!granted && role === best.role)) {
      best = { role, via };
      granted = true;
    }
  };
  for (const role of POLICY_ROLES) {
    const grant = policy.grants[role];
    if (grant.users.includes(userId)) consider(role, 'granted to you');
    const group = grant.groups.find((g) => userGroups.includes(g));
    if (group) consider(role, `granted to ${mention(group)}`);
    if (channelId !== undefined && grant.channels.includes(channelId))
      consider(role, `granted to ${mention(channelId)}`);
  }
  return best;
}

/** The minimum role for a kind: its override in `permissions.kinds`, else its class's role. */
export function neededRole(policy: Policy, kind: GpuCommandKind): PolicyRole {
  return policy.kinds[kind] ?? policy.classes[operationClassOf(kind)];
}

export type Authorization =
  | { readonly allowed: true; readonly role: PolicyRole }
  | {
      readonly allowed: false;
      readonly role: PolicyRole;
      readonly needed: PolicyRole;
      readonly message: string;
    };

export function authorize(input: Who & { readonly kind: GpuCommandKind }): Authorization {
  const { policy, kind } = input;
  const { role, via } = roleOf(input);
  const needed = neededRole(policy, kind);
  if (ROLE_RANK[role] >= ROLE_RANK[needed]) return { allowed: true, role };
  const admins = grantees(policy.grants.admin);
  const whom =
    admins.length > 0 ? `ask an admin (${admins.slice(0, 5).join(', ')})` : 'ask whoever runs gpuops';
  const message =
    `\`/gpu ${commandPath(kind)}\` needs the *${needed}* role, and you have *${role}* (${via}). ` +
    `To get it, ${whom} to grant ${needed} to you, to a user group you are in, or to this channel in the gpuops policy file.`;
  return { allowed: false, role, needed, message };
}

export interface ApprovalNeed {
  readonly required: boolean;
  /** Why, one sentence each, for the card and the requester. */
  readonly reasons: readonly string[];
}

/**
 * Whether a request waits for an approver: its kind is in `approvals.always`, or what it adds per hour
 * is above `approvals.threshold_per_hour`, or its price is unknown (it cannot be shown to be below)
 * unless the policy says `approvals.unknown_price: allow`.
 * Pass `costPerHour` only for operations that add spending (see CommandCost.adds); leave it undefined
 * for the others.
 */
export function needsApproval(input: {
  readonly policy: Policy;
  readonly kind: GpuCommandKind;
  readonly costPerHour?: number | CostEstimate | undefined;
}): ApprovalNeed {
  const { policy, kind, costPerHour } = input;
  const reasons: string[] = [];
  if (policy.approvals.always.includes(kind)) {
    reasons.push(`\`/gpu ${commandPath(kind)}\` always needs an approval.`);
  }
  const threshold = policy.approvals.thresholdPerHour;
  if (costPerHour !== undefined) {
    const known =
      typeof costPerHour === 'number' ? costPerHour : costPerHour.known ? costPerHour.perHour : undefined;
    if (known === undefined && policy.approvals.unknownPrice === 'ask') {
      const why = typeof costPerHour === 'object' && !costPerHour.known ? ` (${costPerHour.reason})` : '';
      reasons.push(
        `Its price is unknown${why}, so it cannot be shown to stay within ${formatUsd(threshold)}/h.`,
      );
    } else if (known !== undefined && known > threshold) {
      reasons.push(
        `It costs about ${formatUsd(known)}/h, above the ${formatUsd(threshold)}/h that needs no approval.`,
      );
    }
  }
  return { required: reasons.length > 0, reasons };
}

export type ApproverCheck =
  | { readonly allowed: true; readonly as: 'approver' | 'admin' | 'peer' }
  | { readonly allowed: false; readonly message: string };

/**
 * The pending requests `approverId` (in `approverGroups`) may decide: what their lists of approvals
 * show. `clickedIn` is the channel the list is shown in, when it is a channel's message (`/gpu approvals`
 * typed there); the Home tab passes none, so a channel's grant never lists anything there.
 */
export function approvableBy<
  R extends {
    readonly requester: string;
    readonly kind: GpuCommandKind;
    readonly display?: { readonly owners?: readonly string[] | undefined } | undefined;
  },
>(
  policy: Policy,
  approverId: string,
  approverGroups: readonly string[],
  pending: readonly R[],
  clickedIn?: string,
): R[] {
  return pending.filter(
    (r) =>
      mayApprove({
        policy,
        approverId,
        approverGroups,
        requesterId: r.requester,
        kind: r.kind,
        owners: r.display?.owners,
        ...(clickedIn !== undefined ? { clickedIn } : {}),
      }).allowed,
  );
}

/**
 * Whether `approverId` may decide a request of `requesterId`. Approvers are the policy's
 * `approvals.approvers`; with none listed, admins; with no admin either, anyone else whose role lets
 * them run the kind themselves. Nobody approves their own request unless `allow_self_approval`.
 */
export function mayApprove(input: {
  readonly policy: Policy;
  readonly approverId: string;
  readonly approverGroups: readonly string[];
  readonly requesterId: string;
  readonly kind: GpuCommandKind;
  /**
   * The channel whose message the click was made in, from Slack's payload (`channel.id`,
   * `container.channel_id`), never a channel gpuops stored: only that channel's grants count. Undefined
   * for a click on the Home tab or anywhere else outside a channel: the approver's own roles decide.
   */
  readonly clickedIn?: string;
  /** Only these may decide (a budget's owners, docs/budgets.md), instead of the policy's approvers. */
  readonly owners?: readonly string[] | undefined;
}): ApproverCheck {
  const { policy, approverId, approverGroups, requesterId, kind } = input;
  if (approverId === requesterId && !policy.approvals.allowSelfApproval) {
    return {
      allowed: false,
      message: 'You asked for this yourself, so someone else has to approve it.',
    };
  }
  if (input.owners && input.owners.length > 0) {
    if (input.owners.includes(approverId)) return { allowed: true, as: 'approver' };
    const names = input.owners.map((u) => `<@${u}>`).join(', ');
    return {
      allowed: false,
      message: `It would take a budget over, so only the budget's owners (${names}) may decide this request.`,
    };
  }
  const listed = policy.approvals.approvers;
  if (listed.users.length > 0 || listed.groups.length > 0) {
    if (listed.users.includes(approverId) || listed.groups.some((g) => approverGroups.includes(g))) {
      return { allowed: true, as: 'approver' };
    }
    return {
      allowed: false,
      message: `Only approvers may decide this request: ${describeApprovers(policy, kind)}.`,
    };
  }
  const who: Who = {
    policy,
    userId: approverId,
    userGroups: approverGroups,
    ...(input.clickedIn !== undefined ? { channelId: input.clickedIn } : {}),
  };
  if (hasAdmins(policy)) {
    if (roleOf(who).role === 'admin') return { allowed: true, as: 'admin' };
    return {
      allowed: false,
      message: `Only approvers may decide this request: ${describeApprovers(policy, kind)}.`,
    };
  }
  if (authorize({ ...who, kind }).allowed) return { allowed: true, as: 'peer' };
  return {
    allowed: false,
    message: `Only someone who may run \`/gpu ${commandPath(kind)}\` themselves (the *${neededRole(policy, kind)}* role) may approve it.`,
  };
}

/** Who may approve, in words for the card and for refusals. */
export function describeApprovers(policy: Policy, kind: GpuCommandKind): string {
  const listed = [
    ...policy.approvals.approvers.users.map(mention),
    ...policy.approvals.approvers.groups.map(mention),
  ];
  if (listed.length > 0) return listed.join(', ');
  if (hasAdmins(policy)) return `an admin (${grantees(policy.grants.admin).join(', ')})`;
  const other = policy.approvals.allowSelfApproval ? 'anyone' : 'anyone other than the requester';
  return `${other} with the ${neededRole(policy, kind)} role`;
}

/** The channel an approval card goes to: the policy's, else the channel of the request. */
export function approvalChannelFor(policy: Policy, requestChannelId: string): string {
  return policy.approvals.channel ?? requestChannelId;
}

/**
 * The lease an approved machine gets: a stop time when the policy has `approvals.lease` and the
 * machine costs more than `lease.required_above_per_hour` (or its price is unknown).
 */
export function leaseFor(input: {
  readonly policy: Policy;
  readonly costPerHour: number | CostEstimate;
}): LeasePolicy | undefined {
  const lease = input.policy.approvals.lease;
  if (!lease) return undefined;
  const c = input.costPerHour;
  const perHour = typeof c === 'number' ? c : c.known ? c.perHour : undefined;
  return perHour === undefined || perHour > lease.requiredAbovePerHour ? lease : undefined;
}

/**
 * The Slack user groups the policy names (grants and approvers): the only ones whose membership
 * the listener needs to look up (`usergroups.users.list`).
 */
export function groupsInPolicy(policy: Policy): string[] {
  const groups = [
    ...POLICY_ROLES.flatMap((r) => policy.grants[r].groups),
    ...policy.approvals.approvers.groups,
  ];
  return [...new Set(groups)];
}

/**
 * The people named in the policy who may decide a request of `requesterId` (the approvers' users;
 * with none listed, the admins' users), at most `max`. Approvers granted through a user group or a
 * channel are not listed: knowing them takes a Slack call per group.
 */
export function namedApprovers(
  policy: Policy,
  kind: GpuCommandKind,
  requesterId: string,
  max: number,
): string[] {
  const listed = policy.approvals.approvers;
  const named = listed.users.length + listed.groups.length > 0 ? listed.users : policy.grants.admin.users;
  return [...new Set(named)]
    .filter((approverId) => mayApprove({ policy, approverId, approverGroups: [], requesterId, kind }).allowed)
    .slice(0, max);
}

function hasAdmins(policy: Policy): boolean {
  const g = policy.grants.admin;
  return g.users.length + g.groups.length + g.channels.length > 0;
}

function grantees(grant: Policy['grants'][PolicyRole]): string[] {
  return [...grant.users, ...grant.groups, ...grant.channels].map(mention);
}

/** Slack's mention syntax for a user, user group or channel id. */
export function mention(id: string): string {
  if (id.startsWith('S')) return `<!subteam^${id}>`;
  if (id.startsWith('C') || id.startsWith('G')) return `<#${id}>`;
  return `<@${id}>`;
}
