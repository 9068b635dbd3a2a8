import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { monthBounds } from '../../src/budgets/forecast.js';
import { parsePolicy } from '../../src/policy/load-policy.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import { listenerAnswer } from './answers.js';
import {
  askForApproval,
  click,
  ephemeralTo,
  messageWhen,
  primeCatalog,
  REQUEST_CHANNEL,
  requestJobsInQueue,
  stored,
} from './guardrails-kit.js';

// Admission against the monthly budgets (docs/budgets.md): a create that would take a budget's forecast
// over its amount waits for one of the budget's owners, whom the card and the requester's notice name
// with the numbers; the policy's usual approver cannot decide it. Under hard_cap it is refused in one
// sentence and nothing runs. An 8×H100 costs $23.12/h; the budgets are $1 a month, so any machine
// running to the month's end takes them over.

const APPROVALS = 'C0APPROVE';
const text = (blocks: unknown) => JSON.stringify(blocks ?? []);

const policy = (hardCap: boolean) =>
  parsePolicy(
    [
      'default_role: operator',
      'approvals:',
      '  threshold_per_hour: 1000',
      '  approvers: { users: [U0BOB] }',
      `  channel: ${APPROVALS}`,
      'budgets:',
      '  ml:',
      '    monthly_usd: 1',
      '    owners: [U0OWEN]',
      `    hard_cap: ${hardCap}`,
      '  company:',
      '    monthly_usd: 1000000000',
      '    owners: [U0BOB]',
    ].join('\n'),
    'budget-admission.yaml',
  );

/** The dollars a machine at `perHour` costs from now to the month's end (UTC, the digest's zone). */
const toMonthEnd = (perHour: number) => {
  const now = Date.now();
  return (perHour * (monthBounds(now, 'UTC').end - now)) / 3_600_000;
};
const dollars = (s: string) => Number(s.replace(/[$,]/g, ''));

describe('an over-budget create', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'C', policy: policy(false) });
    await primeCatalog(stack);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("goes to the budget's owners with the numbers, and only an owner's click approves it", async () => {
    const most = toMonthEnd(23.12);
    const pending = await askForApproval(stack, 'create big-1 h100-hgx-80gb.8x', {
      approvalChannel: APPROVALS,
    });
    const least = toMonthEnd(23.12);
    const reason = /Budget ml: forecast (\$[\d,]+) of \$1 with this request\./.exec(pending.ack);
    expect(reason, pending.ack).not.toBeNull();
    const forecast = dollars(reason![1]!);
    expect(forecast).toBeGreaterThanOrEqual(Math.round(least) - 1);
    expect(forecast).toBeLessThanOrEqual(Math.round(most) + 1);
    expect(pending.ack).toContain("the budget's owners (<@U0OWEN>) can approve or deny it");
    // The company budget has room: it is not named.
    expect(pending.ack).not.toContain('company');
    expect(text(pending.card.blocks)).toContain(`Budget ml: forecast ${reason![1]} of $1 with this request.`);

    // Bob approves everything else in this policy, not this.
    expect((await click(stack, pending, 'U0BOB')).status).toBe(200);
    await ephemeralTo(stack, 'U0BOB', /only the budget's owners \(<@U0OWEN>\) may decide this request/);
    expect((await stored(stack, pending.approvalId)).state).toBe('pending');
    expect((await stack.cloud.listInstances()).filter((i) => i.name === 'big-1')).toEqual([]);

    expect((await click(stack, pending, 'U0OWEN')).status).toBe(200);
    const done = await messageWhen(stack, REQUEST_CHANNEL, pending.requesterTs!, /^Done:/);
    expect(done.text).toMatch(/big-1 is running at/);
    expect((await stored(stack, pending.approvalId)).decision?.by).toBe('U0OWEN');
  });
});

describe('an over-budget create under hard_cap', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({ shape: 'C', policy: policy(true) });
    await primeCatalog(stack);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('is refused in one sentence that names the numbers, and nothing runs', async () => {
    const answer = await listenerAnswer(stack, 'create big-2 h100-hgx-80gb.8x');
    expect(answer).toMatch(
      /^:no_entry: Refused: budget ml has a hard cap, and its forecast would be \$[\d,]+ of \$1 with this request \(\$23\.12\/h to the month's end\); stop something in its projects, or ask its owners to raise monthly_usd in the gpuops policy\.$/,
    );
    expect(await requestJobsInQueue(stack)).toEqual([]);
    expect(await stack.guardrails!.approvals.listPending()).toEqual([]);
    expect((await stack.cloud.listInstances()).filter((i) => i.name === 'big-2')).toEqual([]);
    expect(stack.slack.channelView(APPROVALS)).toEqual([]);
  });
});
