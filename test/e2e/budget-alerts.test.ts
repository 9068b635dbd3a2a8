import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addSystemJob } from '../../src/jobs/system-jobs.js';
import { toPolicy } from '../../src/policy/policy.js';
import { policyFileSchema } from '../../src/policy/policy-schema.js';
import { readCatalog } from '../../src/store/catalog-cache.js';
import { countSpendOf } from '../../src/store/spend-projects.js';
import { checkBudgetAlerts } from '../../src/watch/budget-alerts.js';
import type { AlertedBudget } from '../../src/watch/budget-watch.js';
import { pollProject } from '../../src/watch/poll-project.js';
import type { WatchDeps } from '../../src/watch/watch-deps.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { pngHeader } from '../support/png.js';
import { until } from '../support/until.js';

// Budget alerts on a clock the test moves: an 8×H100 ($23.12 an hour) against a $100 budget crosses
// the forecast at once, then 50, 80 and 100 % of actual spend an hour or two apart. Each threshold is
// said once — in the budget's channel with the month's chart in its thread, and in the owner's DM —
// a second look says nothing more, and the next month says them again.

const HOUR = 3_600_000;
const ALERTS = 'C0BUDGET';
const OWNER = 'U0BOB';
const POLICY = toPolicy(
  policyFileSchema.parse({ budgets: { research: { monthly_usd: 100, owners: [OWNER], channel: ALERTS } } }),
  'test',
);
const BUDGET: AlertedBudget = POLICY.budgets[0]!;

describe('budget alerts end to end', () => {
  let stack: BotStack;
  let now = Date.parse('2026-03-10T08:00:00Z');
  let deps: WatchDeps;
  const signal = new AbortController().signal;

  beforeAll(async () => {
    stack = await startBotStack({ policy: POLICY, watch: { schedulers: false } });
    const projectId = stack.sim.info.projectId;
    await addSystemJob(stack.queue, { v: 1, system: 'catalog.refresh' }, 'catalog-budget-test');
    await until('the catalogue', async () => (await readCatalog(stack.store, projectId)) ?? undefined);
    const big = await stack.cloud.createInstance({ name: 'big-1', type: 'h100-hgx-80gb.8x' });
    await until('big-1 running', async () =>
      (await stack.cloud.getInstance({ id: big.id })).state === 'running' ? true : undefined,
    );
    await countSpendOf(stack.store, projectId);
    // The bot's own composition: the policy's budget, the ledger and the forecast (src/app/money.ts).
    deps = { ...stack.watch!.deps, now: () => now };
  });
  afterAll(async () => {
    await stack?.close();
  });

  const look = async (hours: number) => {
    now += hours * HOUR;
    await pollProject(deps, stack.sim.info.projectId, signal);
  };
  const alertsIn = (channel: string) =>
    stack.slack.channelView(channel).filter((m) => String(m.text).startsWith('Budget research'));

  it('says each threshold once, in the channel with the chart and in the owner DM, and again next month', async () => {
    await look(0); // the baseline
    await look(1); // $23.12
    expect(await checkBudgetAlerts(deps)).toBe('research: forecast-100');
    const first = await until('the forecast alert', async () => alertsIn(ALERTS)[0]);
    expect(first.text).toMatch(
      /^Budget research is forecast to end the month at \$[\d,.]+, over its \$100\.00 \(2026-03\): \$23\.12 spent \(23 %\)/,
    );
    const chart = await until('the chart in its thread', async () =>
      [...stack.slack.files.values()].find((f) => f.channel === ALERTS && f.threadTs === first.ts),
    );
    expect(chart.filename).toBe('budget-research-2026-03.png');
    expect(pngHeader(chart.bytes!)).toEqual({ width: 1000, height: 500 });
    const dm = stack.slack.dmChannelFor(OWNER);
    await until('the DM', async () => alertsIn(dm)[0]);

    expect(await checkBudgetAlerts(deps)).toBe('no budget crossed a new threshold');
    await look(1); // $46.24
    expect(await checkBudgetAlerts(deps)).toBe('no budget crossed a new threshold');
    await look(1); // $69.36
    expect(await checkBudgetAlerts(deps)).toBe('research: actual-50');
    await look(1); // $92.48
    expect(await checkBudgetAlerts(deps)).toBe('research: actual-80');
    expect(await checkBudgetAlerts(deps)).toBe('no budget crossed a new threshold');
    await look(1); // $115.60
    expect(await checkBudgetAlerts(deps)).toBe('research: actual-100');
    await until('four alerts in the channel', async () => (alertsIn(ALERTS).length === 4 ? true : undefined));
    await until('four in the DM', async () => (alertsIn(dm).length === 4 ? true : undefined));
    expect(alertsIn(ALERTS).map((m) => String(m.text).split(' (2026-03)')[0])).toEqual([
      expect.stringMatching(/^Budget research is forecast to end the month at/),
      'Budget research passed 50 % of its $100.00',
      'Budget research passed 80 % of its $100.00',
      'Budget research passed 100 % of its $100.00',
    ]);

    // April: the same thresholds are said again as the new month's spend reaches them.
    now = Date.parse('2026-04-01T08:00:00Z');
    await look(0);
    await look(1);
    expect(await checkBudgetAlerts(deps)).toBe('research: forecast-100');
    await until('the April alert', async () =>
      alertsIn(ALERTS).some((m) => String(m.text).includes('(2026-04)')) ? true : undefined,
    );
  });

  it('counts an alert Slack refused (the bot was removed from the channel) on /metrics', async () => {
    const gone: AlertedBudget = { ...BUDGET, name: 'infra', channel: 'C0GONE', owners: [] };
    const months = deps.budgets!.months;
    const only: WatchDeps = {
      ...deps,
      budgets: {
        ...deps.budgets!,
        months: async (at) =>
          (await months(at)).map((m) => ({ budget: gone, status: { ...m.status, name: 'infra' } })),
      },
    };
    stack.slack.failWith('chat.postMessage', 'not_in_channel', 1, { channel: 'C0GONE' });
    expect(await checkBudgetAlerts(only)).toBe('infra: forecast-100');
    await until('the refusal counted', async () =>
      (await stack.metrics.render()).body.includes(
        'gpuops_budget_alerts_failed_total{reason="not_in_channel"} 1',
      )
        ? true
        : undefined,
    );
  });
});
