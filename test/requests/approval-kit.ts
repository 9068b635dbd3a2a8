import { expect } from 'vitest';
import type { GpuCommand } from '../../src/commands/registry.js';
import { acceptRequest } from '../../src/requests/accept-request.js';
import type { LifecycleDeps } from '../../src/requests/drive-approved.js';
import { slackDecisionPorts } from '../../src/slack/decision-ports.js';
import { DEFAULT_PROJECT, type ListenerStack } from '../support/listener-stack.js';

// What the approved-lifecycle tests share: Ada's request waiting for Bob on a listener stack, Bob's
// approval stored with nothing done after it, and the lifecycle's ports as production wires them.

/** A request waiting for approval: its id, its card, and the requester's own message. */
export interface Asked {
  readonly id: string;
  readonly card: { channel: string; ts: string };
  readonly mine: { channel: string; ts: string };
}

/** `stack()` is read at each call: the stack starts in a `beforeAll`. Machines are named `<prefix>-<n>`. */
export function approvalKit(stack: () => ListenerStack, prefix: string) {
  let n = 0;
  const lifecycle = (extra: Partial<LifecycleDeps> = {}): LifecycleDeps => ({
    ...stack().deps,
    chat: slackDecisionPorts(stack().deps),
    ...extra,
  });

  /** Ada asks for `command` (default: to remove a new machine); its card waits in the approvals channel. */
  async function ask(
    opts: { command?: GpuCommand; requestedAt?: number; responseUrl?: string } = {},
    extra: Parameters<typeof acceptRequest>[3] = {},
  ): Promise<Asked> {
    const instance = `${prefix}-${++n}`;
    await stack().machines(...Array.from({ length: n }, (_, i) => `${prefix}-${i + 1}`));
    const result = await acceptRequest(
      stack().deps,
      opts.command ?? ({ kind: 'rm', instance } as GpuCommand),
      {
        teamId: 'T0FAKE',
        channelId: 'C0GPU',
        userId: 'U0ADA',
        projectId: DEFAULT_PROJECT,
        requestedAt: opts.requestedAt ?? Date.now(),
        ...(opts.responseUrl ? { responseUrl: opts.responseUrl } : {}),
      },
      extra,
    );
    if (result.status !== 'pending-approval' || !result.card || !result.message) {
      throw new Error(`expected a request waiting for approval, got ${result.status}`);
    }
    return { id: result.approvalId, card: result.card, mine: result.message };
  }

  /** Bob's approval as stored, `ago` ms back, with nothing done after it (the listener died at once). */
  async function approvedLeftBehind(asked: Asked, runBy: number, ago = 20_000) {
    const decided = await stack().guardrails.approvals.decide(asked.id, {
      state: 'approved',
      by: 'U0BOB',
      at: Date.now() - ago,
      runBy,
    });
    expect(decided.outcome).toBe('decided');
    return (await stack().guardrails.approvals.get(asked.id))!;
  }

  return { lifecycle, ask, approvedLeftBehind };
}
