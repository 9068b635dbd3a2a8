import { WebClient } from '@slack/web-api';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { FakeSlackApi } from '../../src/devkit/fake-slack-api.js';
import { createLogger } from '../../src/log/logger.js';
import { STANDING_CACHE_SECONDS, standingOf } from '../../src/slack/user-standing.js';
import { createStore, type Store } from '../../src/store/store.js';

// Whether a person is a guest and of which workspace, as the access gate reads it: from users.info on
// the fake Slack through the real SDK, cached in Redis, asked once however many requests come at once.

const TOKEN = 'xoxb-standing';

describe('standingOf', () => {
  let slack: FakeSlackApi;
  let redis: Redis;
  let store: Store;
  let deps: Parameters<typeof standingOf>[0];
  beforeAll(async () => {
    slack = await FakeSlackApi.start({
      tokens: [TOKEN],
      users: [
        { id: 'U0MEMBER', name: 'ada' },
        { id: 'U0GUEST', name: 'grace', is_restricted: true },
        { id: 'U0SINGLE', name: 'sam', is_ultra_restricted: true },
        { id: 'U0BUSY', name: 'bea', team_id: 'T0OTHER' },
      ],
    });
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
    store = createStore(redis, `standing-${process.pid}-${Date.now()}`);
    const client = new WebClient(TOKEN, { slackApiUrl: slack.apiUrl, retryConfig: { retries: 0 } });
    deps = { client, store, log: createLogger({ level: 'silent' }) };
  });
  afterAll(async () => {
    const keys = await redis.keys(`${store.prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    await slack.close();
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
});
