import { mayUse } from '../policy/workspace-access.js';
import type { WatchDeps } from './watch-deps.js';

// Whether a schedule's owner may still use gpuops at all, read from Slack's users.info when it fires:
// a deactivated account, one that became a guest, or one now of another workspace stops acting
// through its old schedules (the policy's access section decides guests and workspaces as for a
// typed command).

export type OwnerStanding =
  | { readonly ok: true }
  /** The owner may no longer use gpuops: the schedule is paused, for this reason (a clause). */
  | { readonly ok: false; readonly pause: string }
  /** Slack did not answer: this firing does nothing, the next one asks again. */
  | { readonly ok: false; readonly unchecked: string };

export async function ownerStanding(deps: WatchDeps, ownerId: string): Promise<OwnerStanding> {
  let user: { deleted?: boolean; is_restricted?: boolean; is_ultra_restricted?: boolean; team_id?: string };
  try {
    const answer = await deps.slack.users.info({ user: ownerId });
    user = answer.user ?? {};
  } catch (err) {
    const code = (err as { data?: { error?: string } }).data?.error;
    // As for a typed command (src/slack/access-gate.ts): Slack keeps deactivated accounts, so an id it
    // does not know at all is not one of them; what is known (the role) is still checked.
    if (code === 'user_not_found') return { ok: true };
    deps.log.warn({ err, ownerId }, "could not read a schedule owner's account");
    return { ok: false, unchecked: code ?? 'no answer' };
  }
  if (user.deleted) return { ok: false, pause: 'its owner has been deactivated' };
  const guest = Boolean(user.is_restricted || user.is_ultra_restricted);
  const check = mayUse(
    deps.policy,
    { teamId: deps.botTeamId },
    {
      teamId: undefined,
      guest,
      ...(user.team_id ? { homeTeamId: user.team_id } : {}),
    },
  );
  if (check.allowed) return { ok: true };
  return {
    ok: false,
    pause:
      guest && !deps.policy.access.allowGuests
        ? 'its owner is now a guest account'
        : 'its owner now belongs to another workspace',
  };
}
