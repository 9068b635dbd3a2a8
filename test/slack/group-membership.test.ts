import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeSlackApi } from '../../src/devkit/fake-slack-api.js';
import { GROUP_CACHE_SECONDS, groupsOf } from '../../src/slack/group-membership.js';
import type { Store } from '../../src/store/store.js';
import { type SlackWithStore, startSlackWithStore } from '../support/slack-with-store.js';

// Which of the policy's user groups a person is in, as roles and approvals read it
// (src/slack/group-membership.ts): from usergroups.users.list on the fake Slack through the real SDK,
// cached in Redis, asked once however many clicks come at once; a group Slack will not list counts as
// one the person is not in.

describe('groupsOf', () => {
  let helpers: SlackWithStore;
  let slack: FakeSlackApi;
  let redis: SlackWithStore['redis'];
  let store: Store;
  let deps: Parameters<typeof groupsOf>[0];
  beforeAll(async () => {
    helpers = await startSlackWithStore('groups', {
      usergroups: { S0LEADS: ['U0BOB', 'U0DOT'], S0OPS: ['U0ADA'], S0SRE: ['U0ADA', 'U0BOB'] },
    });
    ({ slack, redis, store, deps } = helpers);
  });
  afterAll(async () => {
    await helpers?.close();
  });

  it('names the listed groups the person is in, and only those', async () => {
    expect(await groupsOf(deps, 'U0BOB', ['S0LEADS', 'S0OPS', 'S0SRE'])).toEqual(['S0LEADS', 'S0SRE']);
    expect(await groupsOf(deps, 'U0CAROL', ['S0LEADS', 'S0OPS'])).toEqual([]);
    expect(await groupsOf(deps, 'U0ADA', [])).toEqual([]);
  });

  it('asks Slack once for fifty clicks at once, then answers from the cache for a minute', async () => {
    await redis.del(`${store.prefix}:cache:usergroup:S0LEADS`);
    const since = slack.mark();
    const answers = await Promise.all(Array.from({ length: 50 }, () => groupsOf(deps, 'U0DOT', ['S0LEADS'])));
    expect(new Set(answers.map((a) => a.join()))).toEqual(new Set(['S0LEADS']));
    expect(slack.calls.slice(since).filter((c) => c.method === 'usergroups.users.list')).toHaveLength(1);
    const ttl = await redis.ttl(`${store.prefix}:cache:usergroup:S0LEADS`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(GROUP_CACHE_SECONDS);
    await groupsOf(deps, 'U0BOB', ['S0LEADS']);
    expect(slack.calls.slice(since).filter((c) => c.method === 'usergroups.users.list')).toHaveLength(1);
  });

  it('counts a group Slack will not list as one the person is not in, and asks again next time', async () => {
    await redis.del(`${store.prefix}:cache:usergroup:S0OPS`);
    slack.failWith('usergroups.users.list', 'missing_scope');
    expect(await groupsOf(deps, 'U0ADA', ['S0OPS'])).toEqual([]);
    expect(await redis.exists(`${store.prefix}:cache:usergroup:S0OPS`)).toBe(0);
    expect(await groupsOf(deps, 'U0ADA', ['S0OPS'])).toEqual(['S0OPS']);
  });
});
