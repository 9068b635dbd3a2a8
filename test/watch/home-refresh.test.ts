import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markHomeOpened, runningSince } from '../../src/store/home-state.js';
import { recordInstanceOwner } from '../../src/store/instance-owners.js';
import type { ProjectSnapshot, WatchedResource } from '../../src/store/watch-snapshots.js';
import type { ResourceChange } from '../../src/watch/diff-snapshot.js';
import { refreshHomes } from '../../src/watch/home-refresh.js';
import type { BotStack } from '../support/bot-stack.js';
import { startBotStack } from '../support/bot-stack.js';
import { until } from '../support/until.js';

// After a look that changed people's machines, their Home tabs are published again: once per person
// however many of their machines changed at once, and only for people who have opened it.

const [ADA, BOB] = ['U0ADA', 'U0BOB'];

const instance = (id: string, state: string): WatchedResource => ({
  key: `instance:${id}`,
  kind: 'instance',
  id,
  name: id,
  fields: { state, ip: '', type: 'h100-hgx-80gb.1x' },
});

describe('Home tabs after a watched change', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ watch: { schedulers: false } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('publishes an owner’s Home once for a burst of changes, and nobody’s who never opened it', async () => {
    const ids = Array.from({ length: 50 }, (_, i) => `i-ada-${i}`);
    for (const id of ids) {
      await recordInstanceOwner(stack.store, id, ADA, { name: id, channelId: 'C0GPU' });
    }
    await recordInstanceOwner(stack.store, 'i-bob', BOB, { name: 'bob-1', channelId: 'C0GPU' });
    await markHomeOpened(stack.store, ADA, 'D0ADA');
    const changes: ResourceChange[] = [...ids, 'i-bob'].map((id) => ({
      type: 'changed',
      resource: instance(id, 'running'),
      previous: instance(id, 'starting'),
      fields: [{ field: 'state', from: 'starting', to: 'running' }],
      nodes: [],
    }));
    const next: ProjectSnapshot = {
      v: 1,
      polledAt: Date.now(),
      resources: Object.fromEntries(changes.map((c) => [c.resource.key, c.resource])),
    };
    const since = stack.slack.mark();
    // Two looks in a row, as replicas polling one after the other would see them.
    expect(await refreshHomes(stack.watch!.deps, changes, next, false)).toBe(1);
    expect(await refreshHomes(stack.watch!.deps, changes, next, false)).toBe(1);

    await stack.slack.waitFor('views.publish', (c) => c.body.user_id === ADA, 10_000, since);
    await until('the Home job to finish', async () =>
      (await stack.watch!.queue.getJob(`home-${ADA}`)) ? undefined : true,
    );
    const publishes = stack.slack.callsTo('views.publish').filter((c) => c.index >= since);
    expect(publishes.map((c) => c.body.user_id)).toEqual([ADA]);
    // Its uptime starts at the look that first saw it running.
    const [first] = await runningSince(stack.store, [ids[0]!]);
    expect(first).toBe(next.polledAt);
  }, 30_000);
});
