import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addSystemJob } from '../../src/jobs/system-jobs.js';
import { DEFAULT_POLICY, toPolicy } from '../../src/policy/policy.js';
import { policyFileSchema } from '../../src/policy/policy-schema.js';
import { readCatalog } from '../../src/store/catalog-cache.js';
import { sendDigests } from '../../src/watch/digest.js';
import { pollProject } from '../../src/watch/poll-project.js';
import type { WatchDeps } from '../../src/watch/watch-deps.js';
import { scheduleWatchers, WATCH_SCHEDULERS } from '../../src/watch/watch-queue.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { until } from '../support/until.js';
import { CHANNEL, expectCleanSlack, listenerAnswer } from './answers.js';

// The daily digest of a watching channel (shape C, which lists capacity): what runs and its
// GPU-hours, the estimated spend of the day and the month, approvals waiting, and capacity for the
// types the channel uses. The watcher's clock is moved by hand so half an hour passes in a moment.

describe('the daily digest (shape C)', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'C', policy: DEFAULT_POLICY, watch: { schedulers: false } });
    await addSystemJob(stack.queue, { v: 1, system: 'catalog.refresh' }, 'catalog-digest-test');
    await until(
      'the catalogue',
      async () => (await readCatalog(stack.store, stack.sim.info.projectId)) ?? undefined,
    );
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('sums the running time the watcher saw, lists approvals waiting and the capacity of types in use', async () => {
    const projectId = stack.sim.info.projectId;
    const signal = new AbortController().signal;
    let now = Date.UTC(2025, 2, 10, 8, 0, 0);
    const deps: WatchDeps = { ...stack.watch!.deps, now: () => now };
    const big = await stack.cloud.createInstance({ name: 'big-1', type: 'h100-hgx-80gb.8x' });
    await until('big-1 running', async () =>
      (await stack.cloud.getInstance({ id: big.id })).state === 'running' ? true : undefined,
    );
    await listenerAnswer(stack, 'watch on');
    expect((await pollProject(deps, projectId, signal)).status).toBe('baseline');
    now += 30 * 60_000;
    expect((await pollProject(deps, projectId, signal)).status).toBe('committed');
    // $23.12/h is above the default $10/h: this one waits for an approver.
    await stack.command('create big-2 h100-hgx-80gb.8x');
    await until('the approval', async () =>
      (await stack.guardrails!.approvals.listPending()).length > 0 ? true : undefined,
    );

    expect(await sendDigests(deps, signal)).toBe('1 digest(s) for 2025-03-10');
    const digest = await until('the digest', () =>
      stack.slack.channelView(CHANNEL).find((m) => String(m.text).startsWith('Daily digest')),
    );
    expect(digest.text).toBe(
      'Daily digest 2025-03-10: 1 running, $11.56 today, $11.56 this month, 0 idle, 1 approval waiting.',
    );
    const blocks = JSON.stringify(digest.blocks);
    expect(blocks).toContain('*Running* (1, 4.0 GPU-hours today)');
    expect(blocks).toContain('• *big-1* · h100-hgx-80gb.8x · 8 GPUs · 4.0 GPU-hours today');
    expect(blocks).toContain('`/gpu create big-2 h100-hgx-80gb.8x` by <@U0ADA>');
    expect(blocks).toContain('• h100-hgx-80gb.8x: 3 available');
    expectCleanSlack(stack);
  });

  it("adds a line per budget covering the channel's project, and none for a budget of other projects", async () => {
    const projectId = stack.sim.info.projectId;
    const status = (name: string, actualUsd: number) =>
      ({
        name,
        monthlyUsd: 1_000,
        actualUsd,
        forecastUsd: 1_250,
        state: 'forecast_over',
        month: '2025-03',
      }) as const;
    const budget = (name: string, projects: string[]) => ({
      name,
      projects,
      owners: ['U0BOB'],
      alertAt: [50, 80, 100],
      forecastAlert: true,
    });
    const deps: WatchDeps = {
      ...stack.watch!.deps,
      now: () => Date.UTC(2025, 2, 11, 8, 0, 0),
      budgets: {
        months: async () => [
          { budget: budget('research', [projectId]), status: status('research', 400) },
          { budget: budget('everyone', []), status: status('everyone', 900) },
          { budget: budget('elsewhere', ['another-project']), status: status('elsewhere', 100) },
        ],
        rows: async () => [],
      },
    };
    expect(await sendDigests(deps, new AbortController().signal)).toBe('1 digest(s) for 2025-03-11');
    const digest = await until('the digest', async () =>
      stack.slack.channelView(CHANNEL).find((m) => String(m.text).startsWith('Daily digest 2025-03-11')),
    );
    const blocks = JSON.stringify(digest.blocks);
    expect(blocks).toContain(
      '*Budgets* this month\\n• :large_yellow_circle: *research* `▰▰▰▰▱▱▱▱▱▱` $400.00 of $1,000.00 (40 %) · forecast $1,250.00 (125 %) · forecast over budget',
    );
    expect(blocks).toContain('*everyone* `▰▰▰▰▰▰▰▰▰▱` $900.00 of $1,000.00 (90 %)');
    expect(blocks).not.toContain('elsewhere');
  });

  it('schedules the digest with the policy cron and time zone, and removes it when turned off', async () => {
    const queue = stack.watch!.queue;
    const policy = toPolicy(
      policyFileSchema.parse({ digest: { cron: '30 8 * * 1-5', tz: 'Europe/Paris' } }),
      'test',
    );
    await scheduleWatchers(queue, policy);
    expect(await queue.getJobScheduler(WATCH_SCHEDULERS.digest)).toMatchObject({
      pattern: '30 8 * * 1-5',
      tz: 'Europe/Paris',
    });
    await scheduleWatchers(queue, toPolicy(policyFileSchema.parse({ digest: { enabled: false } }), 'test'));
    expect(await queue.getJobScheduler(WATCH_SCHEDULERS.digest)).toBeUndefined();
  });
});
