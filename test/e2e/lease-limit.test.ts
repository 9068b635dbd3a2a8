import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePolicy } from '../../src/policy/load-policy.js';
import { type BotStack, startBotStack } from '../support/bot-stack.js';
import {
  askForApproval,
  click,
  ephemeralTo,
  leaseReminder,
  messageWhen,
  primeCatalog,
  REQUEST_CHANNEL,
  until,
} from './guardrails-kit.js';

// A lease is a promise the machine stops: its owner cannot keep pressing Extend forever. Up to
// lease.max_total from the start the owner extends alone; past it, an approver must agree.

describe('the longest lease an owner can give themselves', () => {
  let stack: BotStack;
  beforeAll(async () => {
    stack = await startBotStack({
      shape: 'B',
      policy: parsePolicy(`
roles:
  operator: { users: [U0ADA] }
approvals:
  approvers: { users: [U0BOB] }
  lease: { required_above_per_hour: 20, default: 6s, remind_before: 5s, max_total: 10s }
`),
    });
    await primeCatalog(stack);
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("stops the owner's Extends at max_total with a clear answer; an approver may go past it", async () => {
    const pending = await askForApproval(stack, 'create long-1 h100-hgx-80gb.8x', {
      approvalChannel: REQUEST_CHANNEL,
    });
    await click(stack, pending, 'U0BOB');
    await messageWhen(stack, REQUEST_CHANNEL, pending.requesterTs!, /^Done:/);
    const { dm, message: reminder, ...reminded } = await leaseReminder(stack, 'U0ADA');
    const lease = async () => (await stack.guardrails.leases.get(pending.approvalId))!;
    // Extend as pressed on a reminder of the lease as it stood at `stopAt`.
    const extend = (userId: string, stopAt: number) =>
      reminded.extend(userId, `${pending.approvalId}|${stopAt}`);
    const first = await lease();

    // 6 s more would make 12 s: the owner's Extend is cut short to end at 10 s from the start.
    expect((await extend('U0ADA', first.stopAt)).status).toBe(200);
    await messageWhen(stack, dm, reminder.ts, /now stops at/);
    const capped = await lease();
    expect(capped.stopAt).toBe(first.startedAt + 10_000);

    expect((await extend('U0ADA', capped.stopAt)).status).toBe(200);
    const refusal = await ephemeralTo(stack, 'U0ADA', /^Not extended/);
    expect(refusal.text).toContain('`long-1` already runs as long as the policy lets its owner keep it');
    expect(refusal.text).toContain('10s from its start, lease.max_total');
    expect(refusal.text).toContain('An approver can extend it further');
    expect((await lease()).stopAt).toBe(capped.stopAt);

    expect((await extend('U0BOB', capped.stopAt)).status).toBe(200);
    await until(
      async () => (await lease()).stopAt === capped.stopAt + 6_000,
      'the approver to extend past it',
    );
    const audit = await stack.guardrails.audit.latest(20);
    // Newest first: the approver's Extend, the owner's refused one past max_total, the owner's own.
    expect(audit.filter((e) => e.operation === 'lease.extend').map((e) => [e.actor, e.outcome])).toEqual([
      ['U0BOB', 'extended'],
      ['U0ADA', 'refused'],
      ['U0ADA', 'extended'],
    ]);
  });
});
