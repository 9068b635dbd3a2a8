import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WAITLIST_CREATE_ACTION } from '../../src/commands/waitlist/render.js';
import type { StoredMessage } from '../../src/devkit/fake-slack-api.js';
import { addSystemJob } from '../../src/jobs/system-jobs.js';
import { readCatalog } from '../../src/store/catalog-cache.js';
import { checkWaitlist } from '../../src/watch/waitlist-check.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { blockActionsPayload } from '../support/slack-driver.js';
import { until } from '../support/until.js';
import { CHANNEL, expectCleanSlack, listenerAnswer } from './answers.js';

// The capacity waitlist on shape C (the shape that lists capacity): the channel is told once when the
// simulator's capacity appears (POST /_sim/capacity), with a Create button that opens the create
// form with the type filled in.

const TYPE = 'h100-hgx-80gb.8x';

async function setCapacity(stack: BotStack, type: string, capacity: number): Promise<void> {
  const res = await request(`${stack.sim.info.controlUrl}/capacity`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ type, capacity }),
  });
  expect(res.statusCode).toBe(200);
  await res.body.dump();
}

const notices = (stack: BotStack): StoredMessage[] =>
  stack.slack.channelView(CHANNEL).filter((m) => String(m.text).startsWith('Capacity for '));

describe('/gpu waitlist (shape C)', () => {
  let stack: BotStack;
  const signal = new AbortController().signal;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'C', watch: { capacityEveryMs: 150 } });
    await setCapacity(stack, TYPE, 0);
    // The listing test waits for this type too; with none free, the fast scheduler cannot tell the
    // channel about it before that test removes the entry (it did on a loaded machine).
    await setCapacity(stack, 'a100-sxm4-80gb.4x', 0);
    // The create form lists types from the cached catalogue, as the scheduled refresh leaves it.
    await addSystemJob(stack.queue, { v: 1, system: 'catalog.refresh' }, 'catalog-waitlist-test');
    await until(
      'the catalogue',
      async () => (await readCatalog(stack.store, stack.sim.info.projectId)) ?? undefined,
    );
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('records, lists and removes what the channel waits for', async () => {
    expect(await listenerAnswer(stack, 'waitlist')).toContain('This channel waits for no capacity');
    const added = await listenerAnswer(stack, 'waitlist a100-sxm4-80gb.4x 3');
    const id = /Added `(w-[0-9a-f]+)`/.exec(added)?.[1];
    expect(id).toBeDefined();
    expect(added).toContain('capacity for 3 machines of *a100-sxm4-80gb.4x*');
    const { answer } = await stack.command('waitlist');
    expect(JSON.stringify((await answer()).blocks)).toContain(`\`${id}\` · *a100-sxm4-80gb.4x* · 3 machines`);
    expect(await listenerAnswer(stack, `waitlist rm ${id}`)).toContain(`Removed \`${id}\``);
    expect(await listenerAnswer(stack, `waitlist rm ${id}`)).toContain(`has no entry \`${id}\``);
  });

  it('refuses a type the cloud does not sell, as create does, naming the types it does', async () => {
    const refused = await listenerAnswer(stack, 'waitlist h100-typo');
    expect(refused).toMatch(/^"h100-typo" is not an instance type this cloud offers\./);
    expect(refused).toContain('Types you can create: ');
    expect(refused).toContain('h100-hgx-80gb.8x');
    const near = await listenerAnswer(stack, 'waitlist h100-hgx-80gb.8z');
    expect(near).toContain('Did you mean `h100-hgx-80gb.8x`?');
    // Nothing was added for either.
    expect(await listenerAnswer(stack, 'waitlist')).toContain('This channel waits for no capacity');
  });

  it('tells the channel once when the capacity appears, with a Create button', async () => {
    const added = await listenerAnswer(stack, `waitlist ${TYPE} 2`);
    const id = /Added `(w-[0-9a-f]+)`/.exec(added)![1]!;
    // No capacity yet: the checks say nothing.
    expect((await checkWaitlist(stack.watch!.deps, signal)).told).toBe(0);
    expect(notices(stack)).toEqual([]);

    await setCapacity(stack, TYPE, 3);
    const notice = await until('the notice', () => notices(stack)[0]);
    expect(notice.text).toBe(`Capacity for ${TYPE} is available: 3 now.`);
    expect(JSON.stringify(notice.blocks)).toContain(`asked for 2 machines, waitlist \`${id}\``);
    // Later checks, from the scheduler and here, never tell it again.
    for (let i = 0; i < 3; i++) expect((await checkWaitlist(stack.watch!.deps, signal)).told).toBe(0);
    expect(notices(stack)).toHaveLength(1);
    expect(await listenerAnswer(stack, 'waitlist')).toContain('This channel waits for no capacity');

    // Create opens the create form with the type already chosen.
    const triggerId = stack.slack.issueTriggerId();
    const value = (
      (notice.blocks ?? []).find((b) => (b as { type: string }).type === 'actions') as {
        elements: Array<{ value: string }>;
      }
    ).elements[0]!.value;
    const response = await stack.interact(
      blockActionsPayload({
        actionId: WAITLIST_CREATE_ACTION,
        value,
        text: 'Create',
        triggerId,
        channelId: CHANNEL,
        message: { ts: notice.ts, text: notice.text ?? '', blocks: notice.blocks ?? [] },
      }),
    );
    expect(response.status).toBe(200);
    const opened = await stack.slack.waitFor('views.open', (c) => c.body.trigger_id === triggerId);
    const view = opened.body.view as {
      callback_id: string;
      blocks: Array<{
        block_id?: string;
        element?: { initial_option?: { value: string; text: { text: string } } };
      }>;
    };
    expect(view.callback_id).toBe('gpuops.form.create');
    const picked = view.blocks.find((b) => b.block_id === 'type')?.element?.initial_option;
    expect(picked?.value).toBe(TYPE);
    // The form shows the capacity the check just saw, not the catalogue's older figure.
    expect(picked?.text.text).toContain('3 free');
    expectCleanSlack(stack);
  });
});

describe('/gpu waitlist where the cloud lists no capacity (shape B)', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'B', watch: { capacityEveryMs: 150 } });
    // Offered nowhere at first, so the entry waits.
    stack.sim.control.setRegions('H100_SXM5_80GB', []);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('waits for the type to be offered by the price list, saying it cannot count machines', async () => {
    const added = await listenerAnswer(stack, `waitlist ${TYPE} 2`);
    expect(added).toContain('when the price list offers');
    expect(added).toContain('does not say how many machines are free');
    expect(added).not.toMatch(/shape|listCapacity/);
    expect(await listenerAnswer(stack, 'waitlist')).toContain('1 entry');
    const signal = new AbortController().signal;
    expect((await checkWaitlist(stack.watch!.deps, signal)).told).toBe(0);

    stack.sim.control.setRegions('H100_SXM5_80GB', ['NORWAY']);
    const offered = () =>
      stack.slack.channelView(CHANNEL).filter((m) => String(m.text) === `${TYPE} is offered now.`);
    const notice = await until('the notice', () => offered()[0]);
    expect(JSON.stringify(notice.blocks)).toContain('the price list offers it now (it cannot say how many');
    expect(await listenerAnswer(stack, 'waitlist')).toContain('This channel waits for no capacity');
  });
});
