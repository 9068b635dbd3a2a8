import type { Redis } from 'ioredis';
import { gpuCommandSchema } from '../../src/commands/registry.js';
import { createLogger } from '../../src/log/logger.js';
import type { Guardrails } from '../../src/policy/guardrails.js';
import { parsePolicy } from '../../src/policy/load-policy.js';
import type { Policy } from '../../src/policy/policy.js';
import { createApprovals } from '../../src/store/approvals.js';
import { createAudit } from '../../src/store/audit.js';
import { createLeases } from '../../src/store/leases.js';

/**
 * Guardrails that let every request through at once (anyone is an admin, nothing waits for an
 * approver) while still checking and auditing it: the policy of tests about something else.
 */
export const OPEN_TEST_POLICY: Policy = parsePolicy(
  [
    'default_role: admin',
    'approvals:',
    '  always: []',
    '  unknown_price: allow',
    '  threshold_per_hour: 1000000',
    // Guests and other workspaces are the subject of their own tests (test/e2e/workspace-access.test.ts).
    'access:',
    '  allow_guests: true',
    '  allow_other_workspaces: true',
    // Rate limits are the subject of their own test (test/reliability/noisy-user.test.ts).
    'rate_limits:',
    '  per_user: { requests: 0 }',
    '  per_channel: { requests: 0 }',
  ].join('\n'),
  'open-test-policy.yaml',
);

/** Guardrails on `redis` under `prefix`, as the composition root builds them, with `policy`. */
export function testGuardrails(redis: Redis, prefix: string, policy: Policy = OPEN_TEST_POLICY): Guardrails {
  return {
    policy,
    approvals: createApprovals(redis, { prefix, command: gpuCommandSchema }),
    audit: createAudit(redis, {
      prefix,
      retentionSeconds: policy.audit.retentionSeconds,
      log: createLogger({ level: 'warn', name: 'test-audit' }),
    }),
    leases: createLeases(redis, { prefix }),
  };
}
