import type { Policy } from './policy.js';

// Who may reach gpuops at all, before roles (docs/policy.md, "Guests and other workspaces"): members
// of the bot's own workspace; guests and members of other workspaces (Slack Connect, Grid) only when
// the policy says so. A refusal says what the person can do about it.

export interface Requester {
  /** The requester's workspace as the request carries it (user.team_id, else team_id). */
  readonly teamId: string | undefined;
  /** From users.info: true for single- and multi-channel guests; undefined when Slack does not know them. */
  readonly guest: boolean | undefined;
  /** Their home workspace as users.info says it, which a shared channel's payload may not. */
  readonly homeTeamId?: string | undefined;
  /** From users.info: the account is deactivated. No policy lets such an account act. */
  readonly deactivated?: boolean | undefined;
}

/** Why a person was kept out, for the audit trail. */
export type AccessRefusal = 'deactivated' | 'other-workspace' | 'guest';

export type AccessCheck =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly message: string; readonly reason: AccessRefusal };

export function mayUse(policy: Policy, botTeamId: string | undefined, who: Requester): AccessCheck {
  const { allowOtherWorkspaces, allowedTeams, allowGuests } = policy.access;
  if (who.deactivated === true) {
    return {
      allowed: false,
      reason: 'deactivated',
      message:
        'This Slack account is deactivated, so gpuops does nothing for it. Ask a workspace admin to reactivate it, or have an active member run this instead.',
    };
  }
  if (botTeamId !== undefined && !allowOtherWorkspaces) {
    const teams = [who.teamId, who.homeTeamId].filter((t): t is string => t !== undefined);
    const foreign = teams.find((t) => t !== botTeamId && !allowedTeams.includes(t));
    if (foreign !== undefined) {
      return {
        allowed: false,
        reason: 'other-workspace',
        message: `gpuops takes requests only from members of its own workspace, and you are signed in from another (${foreign}). Ask an admin of this workspace to add it to access.allowed_teams in the gpuops policy.`,
      };
    }
  }
  if (who.guest === true && !allowGuests) {
    return {
      allowed: false,
      reason: 'guest',
      message:
        'Guest accounts cannot use gpuops in this workspace. Ask a workspace member to run it, or an admin to set access.allow_guests in the gpuops policy.',
    };
  }
  return { allowed: true };
}

/** Whether users.info has to be asked at all: only when guests are refused. */
export function needsStanding(policy: Policy, botTeamId: string | undefined): boolean {
  return !policy.access.allowGuests || (botTeamId !== undefined && !policy.access.allowOtherWorkspaces);
}

/**
 * The start-up warning for a policy that names no approvers and no admins: then any member whose role
 * allows a kind may approve someone else's request of it (docs/policy.md, "Who approves").
 */
export function noDeciderWarning(policy: Policy): string | undefined {
  const { users, groups } = policy.approvals.approvers;
  const admins = policy.grants.admin;
  if (
    users.length + groups.length + admins.users.length + admins.groups.length + admins.channels.length >
    0
  ) {
    return undefined;
  }
  return `The policy (${policy.source}) names no approvers and no admins: any member whose role allows an operation may approve someone else's request for it. Set approvals.approvers or roles.admin in GPUOPS_POLICY (docs/policy.md).`;
}
