import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSpendSource } from '../../src/budgets/spend-source.js';
import { DEFAULT_POLICY } from '../../src/policy/policy.js';
import { catalogCacheName } from '../../src/store/catalog-cache.js';
import { periodsOf } from '../../src/store/ledger-periods.js';
import { cacheKey } from '../../src/store/store.js';
import { watchedPrices } from '../../src/store/watch-prices.js';
import { createWatchSubscriptions } from '../../src/store/watch-subscriptions.js';
import { pollProject } from '../../src/watch/poll-project.js';
import type { WatchDeps } from '../../src/watch/watch-deps.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { until } from '../support/until.js';
import { CHANNEL, channelRequest, finalMessage } from './answers.js';
import { primeCatalog } from './guardrails-kit.js';

// Spend is counted in every project gpuops acts on, not only in those a channel watches: a machine made
// with `/gpu create` in a project nobody watches has its running hours, dollars, type and owner in the
// ledger, and nobody gets a watcher message for it.

describe('spend in a project no channel watches', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'C', watch: { schedulers: false } });
    await primeCatalog(stack);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('is counted from the first job in it, per machine with its owner, and posts nothing', async () => {
    const projectId = stack.sim.info.projectId;
    const signal = new AbortController().signal;
    let now = Date.now();
    const deps: WatchDeps = { ...stack.watch!.deps, now: () => now };
    expect(await createWatchSubscriptions(stack.store).channelsOf(projectId)).toEqual([]);

    const ts = await channelRequest(stack, 'create train-1 h100-hgx-80gb.1x', { userId: 'U0OWNER' });
    await finalMessage(stack, ts, 'Done');
    const posted = stack.slack.channelView(CHANNEL).length;

    expect((await pollProject(deps, projectId, signal)).status).toBe('baseline');
    now += 30 * 60_000;
    expect((await pollProject(deps, projectId, signal)).status).toBe('committed');

    const day = periodsOf(now, DEFAULT_POLICY.digest.tz).day;
    const source = createSpendSource({ store: stack.store, policy: DEFAULT_POLICY });
    const rows = await source.rows({ from: day, to: day, projects: [projectId] });
    expect(rows.map((r) => ({ ...r, usd: Math.round(r.usd * 1000) / 1000 }))).toEqual([
      {
        day,
        project: projectId,
        instance: expect.any(String),
        name: 'train-1',
        owner: 'U0OWNER',
        type: 'h100-hgx-80gb.1x',
        hours: 0.5,
        usd: 1.445,
      },
    ]);
    expect(await source.running([projectId])).toEqual([
      {
        project: projectId,
        instance: rows[0]!.instance,
        name: 'train-1',
        owner: 'U0OWNER',
        type: 'h100-hgx-80gb.1x',
        usdPerHour: 2.89,
      },
    ]);
    // Looked at for its spend only: no watcher message anywhere.
    expect(stack.slack.channelView(CHANNEL)).toHaveLength(posted);
    expect(
      stack.slack.callsTo('chat.postMessage').filter((c) => String(c.body.text).startsWith('Instance ')),
    ).toEqual([]);
  });

  it('asks for the price list of a project it has none for, so its dollars count from the next look', async () => {
    const projectId = stack.sim.info.projectId;
    const signal = new AbortController().signal;
    let now = Date.now() + 2 * 3_600_000;
    const deps: WatchDeps = { ...stack.watch!.deps, now: () => now };
    // No price list cached (as for any project but CLOUD_PROJECT_ID until someone asks in it).
    await stack.store.redis.del(cacheKey(stack.store.prefix, catalogCacheName(projectId)));
    const day = periodsOf(now, DEFAULT_POLICY.digest.tz).day;
    const source = createSpendSource({ store: stack.store, policy: DEFAULT_POLICY });
    const usdOf = async () =>
      (await source.rows({ from: day, to: day, projects: [projectId] })).reduce((sum, r) => sum + r.usd, 0);

    expect((await pollProject(deps, projectId, signal)).status).toBe('committed');
    const before = await usdOf();
    // The look asked for the list; the worker fetches it.
    await until(
      "the project's price list",
      async () => (await watchedPrices(stack.store, projectId)) ?? undefined,
    );
    now += 30 * 60_000;
    expect((await pollProject(deps, projectId, signal)).status).toBe('committed');
    // Half an hour of train-1 at $2.89/h, in dollars this time.
    expect(Math.round(((await usdOf()) - before) * 1000) / 1000).toBe(1.445);
  });
});
