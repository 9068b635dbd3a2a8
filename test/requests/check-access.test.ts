import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GpuCommand } from '../../src/commands/registry.js';
import type { JobContext } from '../../src/jobs/job-data.js';
import { acceptDirect, acceptRequest } from '../../src/requests/accept-request.js';
import {
  DEFAULT_PROJECT,
  expectCleanSlack,
  type ListenerStack,
  policyOf,
  startListenerStack,
} from '../support/listener-stack.js';

// The role check of the request path (src/requests/accept-request.ts checkAccess), through the one door
// every request takes: who may run what, from a user group or from the channel the request was made
// in, what a refusal says in Slack and in a form field, and what the audit trail keeps of it. Vic is a
// viewer, Ada an operator by name, Gil one through the group S0OPS; C0OPS grants operator to
// what is typed or clicked in it.

const POLICY = policyOf(
  'check-access.yaml',
  'default_role: viewer',
  'roles:',
  '  operator: { users: [U0ADA], groups: [S0OPS], channels: [C0OPS] }',
  'approvals:',
  '  always: []',
);

describe('the role check of every request', () => {
  let stack: ListenerStack;
  beforeAll(async () => {
    stack = await startListenerStack(() => {}, {
      policy: POLICY,
      slack: { usergroups: { S0OPS: ['U0GIL'] } },
    });
    await stack.machines('box-1', 'box-2', 'box-3', 'box-4');
  });
  afterAll(async () => {
    expectCleanSlack(stack);
    await stack?.close();
  });

  const ctx = (userId: string, extra: Partial<JobContext> = {}): JobContext => ({
    teamId: 'T0FAKE',
    channelId: 'C0GPU',
    userId,
    projectId: DEFAULT_PROJECT,
    requestedAt: Date.now(),
    ...extra,
  });
  const stop = (instance: string) => ({ kind: 'stop', instance }) as GpuCommand;
  const refusalsOf = async (actor: string) =>
    (await stack.guardrails.audit.latest(100)).filter((e) => e.actor === actor && e.outcome === 'refused');

  it('refuses a viewer’s change with the role it needs and how to get it, typed in a channel', async () => {
    const refused = await acceptRequest(stack.deps, stop('box-1'), ctx('U0VIC', { madeIn: 'C0GPU' }));
    expect(refused).toMatchObject({ status: 'refused', role: 'viewer', needed: 'operator' });
    if (refused.status !== 'refused') throw new Error('expected a refusal');
    expect(refused.plain).toBe(
      '/gpu stop needs the operator role, and you have viewer. Ask an admin to grant operator to you, to a user group you are in, or to this channel in the gpuops policy file.',
    );
    expect(refused.message).toMatch(/operator/);
    expect(await stack.jobs()).toHaveLength(0);
    const entries = await refusalsOf('U0VIC');
    expect(entries[0]).toMatchObject({
      event: 'request',
      operation: 'stop',
      parameters: { instance: 'box-1', role: 'viewer', needed: 'operator' },
    });
  });

  it('says where a channel’s role counts, for a request made from no channel’s message and for a workflow step', async () => {
    const home = await acceptRequest(stack.deps, stop('box-1'), ctx('U0VIC'));
    expect(home.status === 'refused' && home.plain).toBe(
      "/gpu stop needs the operator role, and you have viewer. Ask an admin to grant operator, in the gpuops policy file, to you or to a user group you are in; a channel's role counts only for what is typed or clicked in that channel.",
    );
    const step = await acceptRequest(
      stack.deps,
      stop('box-1'),
      ctx('U0VIC', {
        channelId: 'C0OPS',
        step: { executionId: 'Fx1', callbackId: 'stop_machine', quiet: true },
      }),
    );
    expect(step.status === 'refused' && step.plain).toBe(
      "/gpu stop needs the operator role, and you have viewer. Ask an admin to grant operator, in the gpuops policy file, to you or to a user group you are in; a channel's role does not count for a workflow step.",
    );
    expect(await stack.jobs()).toHaveLength(0);
  });

  it('lets an operator by name, by user group, or by the channel the request was typed in run it', async () => {
    expect((await acceptRequest(stack.deps, stop('box-2'), ctx('U0ADA'))).status).toBe('queued');
    expect((await acceptRequest(stack.deps, stop('box-3'), ctx('U0GIL'))).status).toBe('queued');
    const inOps = await acceptRequest(
      stack.deps,
      stop('box-4'),
      ctx('U0VIC', { channelId: 'C0OPS', madeIn: 'C0OPS' }),
    );
    expect(inOps.status).toBe('queued');
    expect((await stack.jobs()).map((j) => j.data.ctx.userId).sort()).toEqual(['U0ADA', 'U0GIL', 'U0VIC']);
  });

  it('refuses a schedule whose later stops the channel’s grant would not cover, in both its wordings', async () => {
    const command = {
      kind: 'schedule.stop',
      instance: 'box-1',
      when: 'weekdays 20:00',
    } as unknown as GpuCommand;
    const later = await acceptRequest(
      stack.deps,
      command,
      ctx('U0VIC', { channelId: 'C0OPS', madeIn: 'C0OPS' }),
    );
    expect(later).toMatchObject({ status: 'refused', role: 'viewer', needed: 'operator' });
    if (later.status !== 'refused') throw new Error('expected a refusal');
    expect(later.plain).toBe(
      "/gpu schedule stop makes /gpu stop happen later, on your own roles (a channel's role does not count then): it needs the operator role, and yours is viewer. Ask an admin to grant operator to you or to a user group you are in, in the gpuops policy file.",
    );
    expect(later.message).toBe(
      "`/gpu schedule stop` makes `/gpu stop` happen later, on your own roles (a channel's role does not count then): it needs the *operator* role, and yours is *viewer*. Ask an admin to grant operator to you or to a user group you are in, in the gpuops policy file.",
    );
  });

  it('answers a lookup for anyone, and keeps both the answered and the refused on the audit trail', async () => {
    const ls = { kind: 'ls' } as GpuCommand;
    expect(await acceptDirect(stack.deps, ls, ctx('U0VIA'))).toBeUndefined();
    const answered = (await stack.guardrails.audit.latest(20)).find((e) => e.actor === 'U0VIA');
    expect(answered).toMatchObject({ event: 'request', operation: 'ls', outcome: 'answered' });
    expect(answered?.parameters?.needed).toBeUndefined();
    const refused = await acceptDirect(stack.deps, stop('box-1'), ctx('U0VIB'));
    expect(refused).toMatchObject({ status: 'refused', needed: 'operator' });
    expect((await refusalsOf('U0VIB'))[0]).toMatchObject({
      operation: 'stop',
      parameters: { needed: 'operator' },
    });
  });
});
