import type { WebClient } from '@slack/web-api';
import type { Deadline } from '../commands/kit/deadline.js';
import { withDeadline } from '../commands/kit/with-deadline.js';
import type { Logger } from '../log/logger.js';
import type { Store } from '../store/store.js';

// Whether a person is a guest, and of which workspace, from users.info (is_restricted: multi-channel
// guest, is_ultra_restricted: single-channel guest; deleted: a deactivated account). Cached in Redis for five minutes, shared by every
// replica like the user groups, and fetched at most once at a time per person per process.

export const STANDING_CACHE_SECONDS = 300;

export interface Standing {
  readonly guest: boolean;
  /** Slack says the account is deactivated (users.info `deleted`). */
  readonly deactivated?: boolean;
  /** The person's home workspace, where users.info says it. */
  readonly teamId?: string;
  /** The person's Enterprise Grid organisation, where users.info says it. */
  readonly enterpriseId?: string;
}

/** `unknown`: Slack does not know the id (user_not_found); `unreadable`: users.info did not answer. */
export type StandingAnswer = Standing | 'unknown' | { readonly unreadable: string };

export interface StandingDeps {
  readonly client: WebClient;
  readonly store: Store;
  readonly log: Logger;
}

const inFlight = new Map<string, Promise<StandingAnswer>>();
const cacheName = (userId: string) => `standing:${userId}`;

/**
 * What this process last read, kept until the Redis entry it came from expires (never longer): a
 * person's every command would otherwise read the same five-minute-old answer from Redis again.
 */
const remembered = new Map<string, { readonly standing: Standing; readonly until: number }>();
/** People remembered at most; the oldest are forgotten first (they are read from Redis again). */
const REMEMBERED_MAX = 10_000;

function remember(key: string, standing: Standing, storedAt: number): void {
  remembered.delete(key);
  if (remembered.size >= REMEMBERED_MAX) remembered.delete(remembered.keys().next().value!);
  remembered.set(key, { standing, until: storedAt + STANDING_CACHE_SECONDS * 1000 });
}

async function fetchStanding(deps: StandingDeps, userId: string, key: string): Promise<StandingAnswer> {
  try {
    const answer = await withDeadline(deps.client.users.info({ user: userId }), 1_500, 'Slack users.info');
    const user = answer.user;
    const standing: Standing = {
      guest: Boolean(user?.is_restricted || user?.is_ultra_restricted),
      ...(user?.deleted === true ? { deactivated: true } : {}),
      ...(user?.team_id ? { teamId: user.team_id } : {}),
      ...(user?.enterprise_user?.enterprise_id ? { enterpriseId: user.enterprise_user.enterprise_id } : {}),
    };
    void deps.store.putCache(cacheName(userId), standing, STANDING_CACHE_SECONDS).catch(() => {});
    remember(key, standing, Date.now());
    return standing;
  } catch (err) {
    const code = (err as { data?: { error?: string } }).data?.error;
    if (code === 'user_not_found') return 'unknown';
    deps.log.warn({ err, userId }, 'could not read whether a person is a guest');
    return { unreadable: code ?? 'no answer' };
  }
}

async function lookUp(deps: StandingDeps, userId: string, key: string): Promise<StandingAnswer> {
  // Redis down is not a reason to refuse: Slack is asked, and the listener then says Redis is down.
  const cached = await withDeadline(deps.store.cached<Standing>(cacheName(userId)), 1_000, 'Redis').catch(
    () => undefined,
  );
  if (!cached) return fetchStanding(deps, userId, key);
  remember(key, cached.value, cached.storedAt);
  return cached.value;
}

/**
 * With `deadline`: rejects with DeadlinePassed once `reserveMs` before it comes first (the look-up
 * itself goes on, and fills the cache for the next request).
 */
export function standingOf(
  deps: StandingDeps,
  userId: string,
  deadline?: { readonly deadline: Deadline; readonly reserveMs: number },
): Promise<StandingAnswer> {
  const key = `${deps.store.prefix}\u0000${userId}`;
  const known = remembered.get(key);
  if (known && known.until > Date.now()) return Promise.resolve(known.standing);
  // One look-up at a time, cache read included: a caller whose read came back late would ask again.
  let pending = inFlight.get(key);
  if (!pending) {
    pending = lookUp(deps, userId, key).finally(() => inFlight.delete(key));
    inFlight.set(key, pending);
  }
  return deadline
    ? deadline.deadline.race(pending, 'Slack users.info', { reserveMs: deadline.reserveMs })
    : pending;
}
