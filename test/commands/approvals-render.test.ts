import { describe, expect, it } from 'vitest';
import { approvalCard, closedCard, humanDuration, pendingList } from '../../src/commands/approvals/render.js';
import { auditList } from '../../src/commands/audit/render.js';
import { parseCommand } from '../../src/commands/parse-command.js';
import type { GpuCommand } from '../../src/commands/registry.js';
import { checkBlocks } from '../../src/devkit/block-kit-limits.js';
import { estimateMachines } from '../../src/pricing/cost.js';
import { SIM_CONFIGURATIONS } from '../../src/sim/catalog.js';
import type { ApprovalRequest } from '../../src/store/approvals.js';
import type { AuditEntry } from '../../src/store/audit.js';

// The approval card, the lists and the audit lines stay within Slack's limits whatever they hold.

function request(
  i: number,
  overrides: Partial<ApprovalRequest<GpuCommand>> = {},
): ApprovalRequest<GpuCommand> {
  const parsed = parseCommand(`create box-${i} h100-hgx-80gb.8x`);
  if (!parsed.ok) throw new Error('bad command');
  return {
    id: `apr-${String(i).padStart(20, '0')}`,
    kind: 'create',
    command: parsed.command,
    ctx: { teamId: 'T0', channelId: 'C0GPU', userId: 'U0ADA', requestedAt: 1_700_000_000_000 },
    cost: estimateMachines({ prices: { configurations: SIM_CONFIGURATIONS }, type: 'h100-hgx-80gb.8x' }),
    reasons: ['It costs about $23.12/h, above the $10.00/h that needs no approval.'],
    requester: 'U0ADA',
    approvalChannel: 'C0APPROVE',
    createdAt: 1_700_000_000_000,
    expiresAt: 1_700_086_400_000,
    state: 'pending',
    ...overrides,
  };
}

describe('approval messages', () => {
  it('puts Approve and Deny on the card, and takes them off once decided, saying who and why', () => {
    const card = approvalCard(request(1));
    expect(checkBlocks(card.blocks, 'message')).toEqual([]);
    expect(card.text).toBe(
      'Approval needed: /gpu create box-1 h100-hgx-80gb.8x ($23.12/h · $554.88/day), asked by <@U0ADA>',
    );
    const denied = closedCard(
      request(1, {
        state: 'denied',
        decision: { by: 'U0BOB', at: 1_700_000_060_000, reason: `<b>no</b> ${'x'.repeat(600)}` },
      }),
    );
    expect(checkBlocks(denied.blocks, 'message')).toEqual([]);
    expect(JSON.stringify(denied.blocks)).not.toContain('"type":"actions"');
    expect(JSON.stringify(denied.blocks)).toContain('&lt;b&gt;no&lt;/b&gt;');
  });

  it('keeps very long reasons and hundreds of pending requests within Block Kit limits', () => {
    const long = request(2, { reasons: Array.from({ length: 40 }, () => 'r'.repeat(200)) });
    expect(checkBlocks(approvalCard(long).blocks, 'message')).toEqual([]);
    const list = pendingList(
      Array.from({ length: 200 }, (_, i) => request(i)),
      { own: Array.from({ length: 30 }, (_, i) => request(i)) },
    );
    expect(checkBlocks(list.blocks, 'message')).toEqual([]);
    expect(JSON.stringify(list.blocks)).toContain('30 requests of yours wait for someone else:');
    expect(JSON.stringify(list.blocks)).toContain('…and 20 more.');
    expect(JSON.stringify(list.blocks)).toContain('200 requests wait for your approval');
  });

  it('counts one request as one, not "1 request(s)"', () => {
    const one = pendingList([request(0)], { own: [request(1)] });
    expect(one.text).toBe('1 request waits for your approval');
    expect(JSON.stringify(one.blocks)).toContain('*1 request of yours waits for someone else:*');
  });

  it('fits 500 audit entries in one message, saying where the rest is when they do not fit', () => {
    const entries: AuditEntry[] = Array.from({ length: 500 }, (_, i) => ({
      id: `${1_700_000_000_000 + i}-0`,
      event: 'request',
      actor: 'U0ADA',
      operation: 'k8s.pool.add',
      target: `cluster-${i}/pool-with-a-long-name-${'p'.repeat(40)}`,
      project: '3f1c2a9e-8b7d-4c1e-9f2a-1b2c3d4e5f60',
      outcome: 'needs-approval',
      at: 1_700_000_000_000 + i,
      parameters: {},
    }));
    const list = auditList(entries, 500);
    expect(checkBlocks(list.blocks, 'message')).toEqual([]);
    expect(JSON.stringify(list.blocks)).toContain('gpuops audit export');
  });

  it('says durations as people do', () => {
    expect([1, 90, 1800, 5400, 8 * 3600, 86_400 + 7200].map(humanDuration)).toEqual([
      '1s',
      '1m',
      '30m',
      '1h 30m',
      '8h',
      '1d 2h',
    ]);
  });
});
