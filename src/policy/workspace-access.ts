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
  /** Their Enterprise Grid organisation as users.info says it (enterprise_user.enterprise_id). */
  readonly enterpriseId?: string | undefined;
}

/** The bot's own workspace and organisation, as auth.test names them at start. */
export interface BotHome {
  /** Absent for an org-wide install (which custom steps require): then no workspace is its own. */
  readonly teamId: string | undefined;
  readonly enterpriseId?: string | undefined;
}

/** Why a person was kept out, for the audit trail. */
export type AccessRefusal = 'deactivated' | 'other-workspace' | 'guest';

export type AccessCheck =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly message: string; readonly reason: AccessRefusal };

const FIX =
  'Ask an admin of this workspace to add it to access.allowed_teams in the gpuops policy, or to set access.allow_own_enterprise if it belongs to the same organisation.';

/**
 * Whether the person is one of the bot's own (or allowed) people. Fails closed: when auth.test named no
 * workspace (an org-wide install) or the request carries none, only access.allowed_teams and, where the
 * policy allows it, the bot's own organisation (access.allow_own_enterprise) let anyone in.
 */
export function mayUse(policy: Policy, bot: BotHome, who: Requester): AccessCheck {
  const { allowOtherWorkspaces, allowedTeams, allowGuests, allowOwnEnterprise } = policy.access;
  if (who.deactivated === true) {
    return {
      allowed: false,
      reason: 'deactivated',
      message:
        'This Slack account is deactivated, so gpuops does nothing for it. Ask a workspace admin to reactivate it, or have an active member run this instead.',
    };
  }
  const ownOrganisation =
    allowOwnEnterprise && bot.enterpriseId !== undefined && who.enterpriseId === bot.enterpriseId;
  if (!allowOtherWorkspaces && !ownOrganisation) {
    const teams = [who.teamId, who.homeTeamId].filter((t): t is string => t !== undefined);
    const foreign = teams.find((t) => t !== bot.teamId && !allowedTeams.includes(t));
    if (teams.length === 0) {
      return {
        allowed: false,
        reason: 'other-workspace',
        message: `gpuops could not tell which workspace you are signed in from, so it takes no request from you. ${FIX}`,
      };
    }
    if (foreign !== undefined) {
      return {
        allowed: false,
        reason: 'other-workspace',
        message:
          bot.teamId === undefined
            ? `gpuops is installed for a whole organisation and takes requests only from workspaces its policy names, and yours (${foreign}) is not among them. ${FIX}`
            : `gpuops takes requests only from members of its own workspace, and you are signed in from another (${foreign}). ${FIX}`,
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

/** Whether users.info has to be asked at all: for guests, home workspaces and organisations. */
export function needsStanding(policy: Policy): boolean {
  return !policy.access.allowGuests || !policy.access.allowOtherWorkspaces;
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
