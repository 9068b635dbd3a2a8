import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeSlackApi } from '../../src/devkit/fake-slack-api.js';
import { STANDING_CACHE_SECONDS, standingOf } from '../../src/slack/user-standing.js';
import type { Store } from '../../src/store/store.js';
import { type SlackWithStore, startSlackWithStore } from '../support/slack-with-store.js';
import { until } from '../support/until.js';

// Whether a person is a guest and of which workspace, as the access gate reads it: from users.info on
// the fake Slack through the real SDK, cached in Redis, asked once however many requests come at once.

describe('standingOf', () => {
  let helpers: SlackWithStore;
  let slack: FakeSlackApi;
  let redis: SlackWithStore['redis'];
  let store: Store;
  let deps: Parameters<typeof standingOf>[0];
  beforeAll(async () => {
    helpers = await startSlackWithStore('standing', {
      users: [
        { id: 'U0MEMBER', name: 'ada' },
        { id: 'U0GUEST', name: 'grace', is_restricted: true },
        { id: 'U0SINGLE', name: 'sam', is_ultra_restricted: true },
        { id: 'U0BUSY', name: 'bea', team_id: 'T0OTHER' },
        { id: 'U0PROMOTED', name: 'pat' },
      ],
    });
    ({ slack, redis, store, deps } = helpers);
  });
  afterAll(async () => {
    await helpers?.close();
  });

  it('tells members from multi- and single-channel guests, with their workspace', async () => {
    expect(await standingOf(deps, 'U0MEMBER')).toMatchObject({ guest: false });
    expect(await standingOf(deps, 'U0GUEST')).toMatchObject({ guest: true });
    expect(await standingOf(deps, 'U0SINGLE')).toMatchObject({ guest: true });
  });

  it('says a person Slack does not know is unknown', async () => {
    expect(await standingOf(deps, 'U0NOBODY')).toBe('unknown');
  });

  it('asks Slack once for many requests at once, then answers from the cache', async () => {
    const since = slack.mark();
    const answers = await Promise.all(Array.from({ length: 10 }, () => standingOf(deps, 'U0BUSY')));
    expect(answers).toEqual(Array(10).fill({ guest: false, teamId: 'T0OTHER' }));
    expect(slack.calls.slice(since).filter((c) => c.method === 'users.info')).toHaveLength(1);
    const ttl = await redis.ttl(`${store.prefix}:cache:standing:U0MEMBER`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(STANDING_CACHE_SECONDS);
    const before = slack.mark();
    await standingOf(deps, 'U0MEMBER');
    expect(slack.calls.slice(before).filter((c) => c.method === 'users.info')).toHaveLength(0);
  });

  it('holds an answer no longer than the Redis entry it came from', async () => {
    // Another replica cached pat as a guest almost five minutes ago; Slack now says pat is a member.
    const key = `${store.prefix}:cache:standing:U0PROMOTED`;
    const storedAt = Date.now() - STANDING_CACHE_SECONDS * 1000 + 1_000;
    await redis.set(key, JSON.stringify({ value: { guest: true }, storedAt }), 'PX', 1_000);
    expect(await standingOf(deps, 'U0PROMOTED')).toMatchObject({ guest: true });
    await until('the cached answer to expire', async () =>
      (await redis.exists(key)) === 0 ? true : undefined,
    );
    await until(
      'the answer to follow Slack',
      async () => {
        const now = await standingOf(deps, 'U0PROMOTED');
        return typeof now === 'object' && 'guest' in now && !now.guest ? true : undefined;
      },
      2_000,
    );
  });
});
