import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetStatus } from '../../src/budgets/forecast.js';
import { readPowerPlans } from '../../src/budgets/power-plans.js';
import { createSpendSource } from '../../src/budgets/spend-source.js';
import { parsePolicy } from '../../src/policy/load-policy.js';
import type { Policy } from '../../src/policy/policy.js';
import { pollProject } from '../../src/watch/poll-project.js';
import type { WatchDeps } from '../../src/watch/watch-deps.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { settled } from '../support/slash-requests.js';
import { primeCatalog } from './guardrails-kit.js';

// A budget's forecast follows the power schedules people make: a machine that `/gpu schedule stop`
// will stop tonight costs until tonight, not until the month's end.

const POLICY: Policy = parsePolicy(
  [
    'default_role: admin',
    'approvals: { always: [], unknown_price: allow, threshold_per_hour: 1000000 }',
    'rate_limits: { per_user: { requests: 0 }, per_channel: { requests: 0 } }',
    'budgets:',
    '  ml:',
    '    monthly_usd: 5000',
    '    owners: [U0ADA]',
  ].join('\n'),
  'budget-forecast.yaml',
);

// Monday 13 January 2031, 12:00 UTC: 18.5 days (444 hours) to the month's end.
const NOW = Date.parse('2031-01-13T12:00:00Z');

describe('the budget forecast', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'C', policy: POLICY, watch: { schedulers: false } });
    await primeCatalog(stack);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('is lowered by a stop schedule', async () => {
    const projectId = stack.sim.info.projectId;
    const signal = new AbortController().signal;
    let now = NOW - 30 * 60_000;
    const deps: WatchDeps = { ...stack.watch!.deps, now: () => now };
    // $23.12 an hour (8 × $2.89).
    await settled(stack, 'create train-1 h100-hgx-80gb.8x', 'Done');
    expect((await pollProject(deps, projectId, signal)).status).toBe('baseline');
    now = NOW;
    expect((await pollProject(deps, projectId, signal)).status).toBe('committed');

    const source = createSpendSource({ store: stack.store, policy: POLICY });
    const status = async () =>
      budgetStatus(
        POLICY,
        source,
        NOW,
        await readPowerPlans(
          { store: stack.store, leases: stack.guardrails!.leases },
          await source.running(),
        ),
      );
    // Half an hour spent, then 444 hours to come: over the $5,000.
    expect(await status()).toEqual([
      {
        name: 'ml',
        month: '2031-01',
        monthlyUsd: 5000,
        actualUsd: 11.56,
        forecastUsd: 11.56 + 444 * 23.12,
        state: 'forecast_over',
      },
    ]);

    await settled(stack, 'schedule stop train-1 daily 20:00 --tz UTC', 'Done');
    // Stopped at 20:00 tonight: 8 hours more.
    expect(await status()).toEqual([
      {
        name: 'ml',
        month: '2031-01',
        monthlyUsd: 5000,
        actualUsd: 11.56,
        forecastUsd: 11.56 + 8 * 23.12,
        state: 'ok',
      },
    ]);
  });
});
