import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { HomeMachine } from '../../src/commands/home/home-data.js';
import { spendSection } from '../../src/commands/home/spend-section.js';
import type { HomeDeps } from '../../src/home/home-deps.js';
import { gatherSpend, weekDays } from '../../src/home/home-spend.js';
import { DEFAULT_POLICY } from '../../src/policy/policy.js';
import { estimateMachines } from '../../src/pricing/cost.js';
import { createStore, type Store } from '../../src/store/store.js';
import { createSnapshotStore } from '../../src/store/watch-snapshots.js';

// A person's week on their Home tab, from the watchers' spend ledger in a real Redis: their share is
// the GPU-hours of their own machines at their type's price; the project line is every machine's.

const PROJECT = '7b0c1e2a-1111-4222-8333-944455556666';
// Wednesday noon, UTC (the default digest time zone): the week so far is Monday to Wednesday.
const NOW = Date.parse('2026-11-25T12:00:00Z');
const PRICES = {
  configurations: [
    {
      gpu_type: 'H100_SXM5_80GB',
      gpu_counts: [1, 8],
      price_per_gpu_hr: '2.89',
      stopped_price_per_hour: '0.10',
      regions: ['eu-north1'],
    },
  ],
};

let redis: Redis;
let store: Store;
beforeAll(() => {
  redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
  store = createStore(redis, `home-${randomBytes(4).toString('hex')}`);
});
afterAll(async () => {
  const keys = await redis.keys(`${store.prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

describe('this week on the Home tab', () => {
  it('counts Monday to today in the digest time zone', () => {
    expect(weekDays(NOW, 'UTC').map((d) => d.day)).toEqual(['2026-11-23', '2026-11-24', '2026-11-25']);
    // On a Monday the week is that day alone; on a Sunday, all seven.
    expect(weekDays(Date.parse('2026-11-23T08:00:00Z'), 'UTC')).toHaveLength(1);
    expect(weekDays(Date.parse('2026-11-29T20:00:00Z'), 'UTC')).toHaveLength(7);
  });

  it('prices the GPU-hours of this person’s machines and sums every machine of their projects', async () => {
    const ledger = createSnapshotStore(store);
    await ledger.addToLedger(PROJECT, '2026-11-23', '2026-11', {
      usd: 100,
      gpuHours: { 'i-mine': 8, 'i-theirs': 32 },
    });
    await ledger.addToLedger(PROJECT, '2026-11-25', '2026-11', { usd: 50, gpuHours: { 'i-mine': 16 } });
    // Last week's Sunday is not this week.
    await ledger.addToLedger(PROJECT, '2026-11-22', '2026-11', { usd: 999, gpuHours: { 'i-mine': 99 } });
    const mine: HomeMachine = {
      id: 'i-mine',
      name: 'train-1',
      channelId: 'C0GPU',
      projectId: PROJECT,
      state: 'running',
      type: 'h100-hgx-80gb.8x',
      cost: estimateMachines({ prices: PRICES, type: 'h100-hgx-80gb.8x', state: 'running' }),
    };
    const deps = { store, policy: DEFAULT_POLICY } as unknown as HomeDeps;
    const projects = new Map([[PROJECT, { name: 'ml-research', snapshot: undefined, catalog: undefined }]]);
    const spend = await gatherSpend(deps, [mine], projects, NOW);

    expect(spend.days.map((d) => [d.day, d.userGpuHours])).toEqual([
      ['2026-11-23', 8],
      ['2026-11-24', 0],
      ['2026-11-25', 16],
    ]);
    // 24 GPU-hours of an 8-GPU machine at $23.12 an hour: three machine-hours.
    expect(spend.days.reduce((a, d) => a + d.userUsd, 0)).toBeCloseTo(69.36, 2);
    expect(spend.projects).toEqual([{ projectId: PROJECT, name: 'ml-research', usd: 150, gpuHours: 56 }]);
    expect(spend.unpriced).toBe(false);
    const text = JSON.stringify(spendSection(spend));
    expect(text).toContain('Your machines: *$69.36* · 24 GPU-hours');
    expect(text).toContain('ml-research: $150.00 · 56 GPU-hours');
  });
});
