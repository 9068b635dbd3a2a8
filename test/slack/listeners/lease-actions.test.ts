import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { leaseReminder } from '../../../src/commands/approvals/lease-messages.js';
import { EXTEND_ACTION } from '../../../src/commands/approvals/render.js';
import { DEFAULT_LEASE_MAX_TOTAL_SECONDS } from '../../../src/policy/policy-schema.js';
import { registerLeaseActions } from '../../../src/slack/listeners/lease-actions.js';
import type { Lease } from '../../../src/store/leases.js';
import {
  expectCleanSlack,
  type ListenerStack,
  policyOf,
  startListenerStack,
} from '../../support/listener-stack.js';

// The Extend button of a lease reminder (src/slack/listeners/lease-actions.ts) alone: the owner or an
// approver moves the stop time once however often it is pressed; anyone else changes nothing.

const POLICY = policyOf(
  'leases.yaml',
  'default_role: operator',
  'approvals:',
  '  approvers: { users: [U0BOB] }',
);
const HOUR = 3_600_000;
const DM = 'D0ADA';

describe('the Extend button of a lease reminder', () => {
  let stack: ListenerStack;
  let n = 0;
  beforeAll(async () => {
    stack = await startListenerStack(registerLeaseActions, { policy: POLICY });
  });
  afterAll(async () => {
    expectCleanSlack(stack);
    await stack?.close();
  });

  /** Ada's machine under a lease, and its reminder in her DM; `startedAgoMs` back, stopping at `stopAt`. */
  async function leased(startedAgoMs = HOUR, stopInMs = HOUR): Promise<{ lease: Lease; ts: string }> {
    const now = Date.now();
    const { lease } = await stack.guardrails.leases.start({
      id: `lease-${++n}`,
      owner: 'U0ADA',
      instance: `big-${n}`,
      teamId: 'T0FAKE',
      channelId: 'C0GPU',
      request: `/gpu create big-${n} h100-hgx-80gb.8x`,
      extendSeconds: 4 * 3600,
      remindBeforeSeconds: 1800,
      startedAt: now - startedAgoMs,
      stopAt: now + stopInMs,
    });
    const posted = await stack.deps.client.chat.postMessage({ channel: DM, ...leaseReminder(lease, now) });
    return { lease, ts: String(posted.ts) };
  }

  const extend = (lease: Lease, userId: string, ts?: string, stopAt = lease.stopAt) =>
    stack.press(EXTEND_ACTION, `${lease.id}|${stopAt}`, { userId, channelId: DM, ...(ts ? { ts } : {}) });

  it('moves the owner’s stop time once for a double press, edits the reminder and schedules the new stop', async () => {
    const { lease, ts } = await leased();
    await Promise.all([extend(lease, 'U0ADA', ts), extend(lease, 'U0ADA', ts)]);
    const after = await stack.guardrails.leases.get(lease.id);
    expect(after?.stopAt).toBe(lease.stopAt + 4 * HOUR);
    const reminder = stack.slack.message(DM, ts);
    expect(reminder?.text).toBe(
      `big-1 now stops at ${new Date(after!.stopAt).toISOString().slice(0, 16).replace('T', ' ')} UTC.`,
    );
    expect(JSON.stringify(reminder?.blocks)).toContain('Extended by <@U0ADA>');
    expect(JSON.stringify(reminder?.blocks)).not.toContain(EXTEND_ACTION);
    // The second press saw the first one's result: told, nothing more moved.
    expect(stack.ephemeralsTo('U0ADA').at(-1)).toMatch(/^Already extended: `big-1` now stops at /);
    const ids = (await stack.systemJobs()).map((j) => j.id);
    expect(ids).toContain(`lease-stop-${lease.id}-${after!.stopAt}`);
    const audit = (await stack.guardrails.audit.latest(10)).filter((e) => e.jobId === lease.id);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor: 'U0ADA', operation: 'lease.extend', outcome: 'extended' });
  });

  it('refuses someone who is neither the owner nor an approver, and changes nothing', async () => {
    const { lease, ts } = await leased();
    await extend(lease, 'U0CAROL', ts);
    expect(stack.ephemeralsTo('U0CAROL').at(-1)).toBe(
      'Only <@U0ADA> or an approver may extend this lease; nothing was changed.',
    );
    expect((await stack.guardrails.leases.get(lease.id))?.stopAt).toBe(lease.stopAt);
    expect(stack.slack.message(DM, ts)?.history).toHaveLength(1);
  });

  it('stops the owner at the policy’s longest lease, where an approver may still extend', async () => {
    const maxMs = DEFAULT_LEASE_MAX_TOTAL_SECONDS * 1000;
    const { lease } = await leased(maxMs - HOUR, HOUR);
    await extend(lease, 'U0ADA');
    expect(stack.ephemeralsTo('U0ADA').at(-1)).toMatch(
      /^Not extended: `big-3` already runs as long as the policy lets its owner keep it .* An approver can extend it further\.$/,
    );
    expect((await stack.guardrails.leases.get(lease.id))?.stopAt).toBe(lease.stopAt);
    await extend(lease, 'U0BOB');
    expect((await stack.guardrails.leases.get(lease.id))?.stopAt).toBe(lease.stopAt + 4 * HOUR);
  });

  it('says so for a lease that ended or that it no longer knows, and ignores a malformed button', async () => {
    const { lease } = await leased();
    expect(await stack.guardrails.leases.markStopping(lease.id, lease.stopAt)).toBe(true);
    await extend(lease, 'U0ADA');
    expect(stack.ephemeralsTo('U0ADA').at(-1)).toBe(
      'Too late: the lease of `big-4` ended and it is being stopped.',
    );
    await stack.press(EXTEND_ACTION, `lease-gone|${Date.now()}`, { userId: 'U0ADA', channelId: DM });
    expect(stack.ephemeralsTo('U0ADA').at(-1)).toBe('This lease is no longer known to gpuops.');
    const told = stack.ephemeralsTo('U0ADA').length;
    for (const value of ['lease-4', '', undefined]) {
      await stack.press(EXTEND_ACTION, value, { userId: 'U0ADA', channelId: DM });
    }
    expect(stack.ephemeralsTo('U0ADA')).toHaveLength(told);
  });
});
