import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addSystemJob } from '../../src/jobs/system-jobs.js';
import { toPolicy } from '../../src/policy/policy.js';
import { policyFileSchema } from '../../src/policy/policy-schema.js';
import { readCatalog } from '../../src/store/catalog-cache.js';
import { periodsOf } from '../../src/store/ledger-periods.js';
import { countSpendOf } from '../../src/store/spend-projects.js';
import { pollProject } from '../../src/watch/poll-project.js';
import type { WatchDeps } from '../../src/watch/watch-deps.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { openHome, published } from '../support/home-driver.js';
import { until } from '../support/until.js';
import { privateAnswer } from './answers.js';

// `/gpu budget` and the Home tab's gauges through the bot, from the policy's budgets, the ledger and
// the forecast. The watcher's looks are dated at the start of this month on a clock the test moves,
// and the machine is stopped at the end, so the forecast is the month so far whatever the time now.

const HOUR = 3_600_000;
const BOB = 'U0BOB';
const CAROL = 'U0CAROL';
const OTHER_PROJECT = '0d5c6b7a-1e2f-4a3b-8c4d-5e6f7a8b9c0d';
const POLICY = toPolicy(
  policyFileSchema.parse({
    budgets: {
      research: { monthly_usd: 100, owners: [BOB], channel: 'C0BUDGET' },
      elsewhere: { monthly_usd: 500, owners: [CAROL], projects: [OTHER_PROJECT] },
    },
  }),
  'test',
);

describe('/gpu budget and the Home gauges end to end', () => {
  let stack: BotStack;

  beforeAll(async () => {
    stack = await startBotStack({ policy: POLICY, watch: { schedulers: false } });
    const projectId = stack.sim.info.projectId;
    await addSystemJob(stack.queue, { v: 1, system: 'catalog.refresh' }, 'catalog-budget-views');
    await until('the catalogue', async () => (await readCatalog(stack.store, projectId)) ?? undefined);
    const big = await stack.cloud.createInstance({ name: 'big-1', type: 'h100-hgx-80gb.8x' });
    const state = (want: string) => async () =>
      (await stack.cloud.getInstance({ id: big.id })).state === want ? true : undefined;
    await until('big-1 running', state('running'));
    await countSpendOf(stack.store, projectId);
    let now = Date.parse(`${periodsOf(Date.now(), POLICY.digest.tz).month}-01T01:00:00Z`);
    const deps: WatchDeps = { ...stack.watch!.deps, now: () => now };
    const signal = new AbortController().signal;
    // Four hours of an 8×H100 at $23.12 (the last look counts the hour to the stop): $92.48; stopped,
    // nothing more is forecast.
    for (let k = 0; k < 4; k++) {
      await pollProject(deps, projectId, signal);
      now += HOUR;
    }
    await stack.cloud.stopInstance({ id: big.id });
    await until('big-1 stopped', state('stopped'));
    await pollProject(deps, projectId, signal);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("lists each budget's actual, forecast and state to the requester alone", async () => {
    const month = periodsOf(Date.now(), POLICY.digest.tz).month;
    const answer = await privateAnswer(stack, 'budget');
    expect(answer.text).toContain('2 budgets: research $92.48 of $100.00, elsewhere $0.00 of $500.00');
    expect(answer.blocksJson).toContain(`*Budgets* · ${month}`);
    expect(answer.blocksJson).toContain(
      ':large_green_circle: *research* `▰▰▰▰▰▰▰▰▰▱` $92.48 of $100.00 (92 %) · forecast $92.48 (92 %) · on track',
    );
    expect(answer.blocksJson).toContain('*elsewhere* `▱▱▱▱▱▱▱▱▱▱` $0.00 of $500.00 (0 %)');
  });

  it('shows Bob the budget he owns on his Home tab, and not one he has nothing to do with', async () => {
    const since = stack.slack.mark();
    await openHome(stack, BOB);
    const call = await published(stack, since, () => true, BOB);
    const view = JSON.stringify(call.body.view);
    expect(view).toContain('*Your budgets*');
    expect(view).toContain('*research* `▰▰▰▰▰▰▰▰▰▱` $92.48 of $100.00 (92 %)');
    expect(view).not.toContain('elsewhere');
  });
});
