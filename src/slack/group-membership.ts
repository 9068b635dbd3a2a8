import type { WebClient } from '@slack/web-api';
import type { Deadline } from '../commands/kit/deadline.js';
import { withDeadline } from '../commands/kit/with-deadline.js';
import type { Logger } from '../log/logger.js';
import type { Store } from '../store/store.js';

// Which of the policy's Slack user groups a person is in. Members come from usergroups.users.list,
// cached in Redis for a minute (so every replica shares one lookup) and fetched at most once at a time
// per process (fifty clicks at once make one call). A group that cannot be read counts as one the
// person is not in: the safe side for roles and approvers alike.

export const GROUP_CACHE_SECONDS = 60;

export interface MembershipDeps {
  readonly client: WebClient;
  readonly store: Store;
  readonly log: Logger;
}

const inFlight = new Map<string, Promise<readonly string[] | undefined>>();

const cacheName = (group: string) => `usergroup:${group}`;

async function fetchMembers(deps: MembershipDeps, group: string): Promise<readonly string[] | undefined> {
  try {
    const answer = await withDeadline(
      deps.client.usergroups.users.list({ usergroup: group }),
      2_000,
      'Slack usergroups.users.list',
    );
    const users = answer.users ?? [];
    await deps.store.putCache(cacheName(group), users, GROUP_CACHE_SECONDS).catch(() => {});
    return users;
  } catch (err) {
    deps.log.warn({ err, group }, 'could not read a user group: counted as not a member');
    return undefined;
  }
}

async function lookUp(deps: MembershipDeps, group: string): Promise<readonly string[] | undefined> {
  const cached = await withDeadline(deps.store.cached<string[]>(cacheName(group)), 1_000, 'Redis');
  return cached ? cached.value : fetchMembers(deps, group);
}

function membersOf(deps: MembershipDeps, group: string): Promise<readonly string[] | undefined> {
  // One look-up at a time, cache read included: a caller whose read came back late would ask again.
  const key = `${deps.store.prefix}\u0000${group}`;
  let pending = inFlight.get(key);
  if (!pending) {
    pending = lookUp(deps, group).finally(() => inFlight.delete(key));
    inFlight.set(key, pending);
  }
  return pending;
}

/**
 * The groups among `groups` that `userId` belongs to. With the request's `deadline`, DeadlinePassed
 * once `reserveMs` before it comes first: a late answer is not taken as "not a member".
 */
export async function groupsOf(
  deps: MembershipDeps,
  userId: string,
  groups: readonly string[],
  deadline?: { readonly deadline: Deadline; readonly reserveMs: number },
): Promise<string[]> {
  if (groups.length === 0) return [];
  const all = Promise.all(groups.map((g) => membersOf(deps, g)));
  const members = await (deadline
    ? deadline.deadline.race(all, 'Slack usergroups.users.list', { reserveMs: deadline.reserveMs })
    : all);
  return groups.filter((_, i) => members[i]?.includes(userId) ?? false);
}
