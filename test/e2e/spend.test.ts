import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSpendSource } from '../../src/budgets/spend-source.js';
import { periodDays } from '../../src/commands/budgets/spend-period.js';
import { addSystemJob } from '../../src/jobs/system-jobs.js';
import { DEFAULT_POLICY } from '../../src/policy/policy.js';
import { formatUsd } from '../../src/pricing/cost.js';
import { runSpendExport } from '../../src/spend-export/run-spend-export.js';
import { readCatalog } from '../../src/store/catalog-cache.js';
import { recordInstanceOwner } from '../../src/store/instance-owners.js';
import { periodsOf } from '../../src/store/ledger-periods.js';
import { countSpendOf } from '../../src/store/spend-projects.js';
import { pollProject } from '../../src/watch/poll-project.js';
import type { WatchDeps } from '../../src/watch/watch-deps.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { pngHeader } from '../support/png.js';
import { channelRequest } from '../support/slash-requests.js';
import { until } from '../support/until.js';
import { CHANNEL, expectCleanSlack, finalMessage, listenerAnswer } from './answers.js';

// `/gpu spend` through the bot: the watcher counts last month's running time look by look on a clock
// the test moves, and the answer's total, the chart's days and `gpuops spend export` for the month all add up to the
// same dollars.

const HOUR = 3_600_000;

describe('/gpu spend end to end', () => {
  let stack: BotStack;
  let month: ReturnType<typeof periodDays>;

  beforeAll(async () => {
    stack = await startBotStack({ policy: DEFAULT_POLICY, watch: { schedulers: false } });
    await addSystemJob(stack.queue, { v: 1, system: 'catalog.refresh' }, 'catalog-spend-test');
    const projectId = stack.sim.info.projectId;
    await until('the catalogue', async () => (await readCatalog(stack.store, projectId)) ?? undefined);
    const big = await stack.cloud.createInstance({ name: 'big-1', type: 'h100-hgx-80gb.8x' });
    const small = await stack.cloud.createInstance({ name: 'small-1', type: 'h100-hgx-80gb.1x' });
    for (const id of [big.id, small.id]) {
      await until('running', async () =>
        (await stack.cloud.getInstance({ id })).state === 'running' ? true : undefined,
      );
    }
    // big-1 was made through gpuops by Ada; small-1 elsewhere. Nobody watches the project: it is counted.
    await countSpendOf(stack.store, projectId);
    await recordInstanceOwner(stack.store, big.id, 'U0ADA');
    // Looks on two days of last month, an hour apart: the ledger counts them as it would have then.
    month = periodDays('last month', periodsOf(Date.now(), DEFAULT_POLICY.digest.tz));
    const signal = new AbortController().signal;
    for (const [day, looks] of [
      [month.days[2]!, 4],
      [month.days[9]!, 3],
    ] as const) {
      let now = Date.parse(`${day}T09:00:00Z`);
      const deps: WatchDeps = { ...stack.watch!.deps, now: () => now };
      for (let k = 0; k < looks; k++) {
        await pollProject(deps, projectId, signal);
        now += HOUR;
      }
    }
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('answers the month total with the top spenders, and a chart whose days add up to it and to gpuops spend export', async () => {
    const rows = await createSpendSource({ store: stack.store, policy: DEFAULT_POLICY }).rows({
      from: month.from,
      to: month.to,
    });
    const ledgerUsd = rows.reduce((a, r) => a + r.usd, 0);
    expect(ledgerUsd).toBeGreaterThan(0);
    // What finance gets for the same month: `gpuops spend export` on the bot's own settings.
    let csv = '';
    const stdout = new Writable({
      write(chunk, _encoding, done) {
        csv += String(chunk);
        done();
      },
    });
    const code = await runSpendExport(['export', '--month', month.from.slice(0, 7)], stack.env(), {
      stdout,
      stderr: { write: () => true },
    });
    expect(code).toBe(0);
    const exportUsd = csv
      .trim()
      .split('\n')
      .slice(1)
      .reduce((a, line) => a + Number(line.split(',').at(-1)), 0);
    expect(formatUsd(exportUsd)).toBe(formatUsd(ledgerUsd));

    const ts = await channelRequest(stack, 'spend last month');
    const message = await finalMessage(stack, ts, 'Done');
    expect(message.text).toContain(`${formatUsd(ledgerUsd)} for all projects in ${month.label}`);
    const blocks = JSON.stringify(message.blocks);
    expect(blocks).toContain('*Top owners*');
    expect(blocks).toContain('<@U0ADA>');
    expect(blocks).toContain('_made outside gpuops_');
    expect(blocks).toContain('h100-hgx-80gb.8x');

    const charts = [...stack.slack.files.values()].filter((f) => f.channel === CHANNEL && f.threadTs === ts);
    expect(charts).toHaveLength(1);
    expect(pngHeader(charts[0]!.bytes!)).toEqual({ width: 1000, height: 500 });
    // The alt text carries each day's dollars: they add up to the total.
    const perDay = [...String(charts[0]!.altText).matchAll(/\d{4}-\d\d-\d\d \$([\d,.]+)/g)].map((m) =>
      Number(m[1]!.replaceAll(',', '')),
    );
    expect(perDay).toHaveLength(month.days.length);
    expect(formatUsd(perDay.reduce((a, v) => a + v, 0))).toBe(formatUsd(ledgerUsd));
    expectCleanSlack(stack);
  });

  it("counts one person's machines with @person", async () => {
    const rows = await createSpendSource({ store: stack.store, policy: DEFAULT_POLICY }).rows({
      from: month.from,
      to: month.to,
    });
    const ada = rows.filter((r) => r.owner === 'U0ADA').reduce((a, r) => a + r.usd, 0);
    const ts = await channelRequest(stack, 'spend <@U0ADA|ada> last month');
    const message = await finalMessage(stack, ts, 'Done');
    expect(message.text).toContain(`${formatUsd(ada)} for <@U0ADA>'s machines in ${month.label}`);
  });

  it('says which projects and types there are when a word names neither, and posts no chart', async () => {
    const ts = await channelRequest(stack, 'spend nope last month');
    const message = await finalMessage(stack, ts, 'Failed');
    expect(message.text).toContain(
      `\`nope\` is neither a project nor an instance type with spend in ${month.label} (projects: ${stack.sim.info.projectId}; types: h100-hgx-80gb.1x, h100-hgx-80gb.8x)`,
    );
    expect([...stack.slack.files.values()].filter((f) => f.threadTs === ts)).toEqual([]);
  });

  it('says so when nothing ran in the period, and posts no chart', async () => {
    const ts = await channelRequest(stack, 'spend this week');
    const message = await finalMessage(stack, ts, 'Done');
    expect(message.text).toMatch(
      /No spend counted for all projects in the week of \d{4}-\d\d-\d\d: gpuops saw no machine running there in that time\./,
    );
    expect([...stack.slack.files.values()].filter((f) => f.threadTs === ts)).toEqual([]);
  });

  it('refuses a period it does not know to the requester alone, and queues nothing', async () => {
    const since = stack.slack.mark();
    expect(await listenerAnswer(stack, 'spend next month')).toContain(
      '"next month" is not a period `/gpu spend` knows: use `this month` (the default), `last month` or `this week`.',
    );
    expect(stack.slack.calls.filter((c) => c.index >= since && c.method === 'chat.postMessage')).toEqual([]);
  });
});
