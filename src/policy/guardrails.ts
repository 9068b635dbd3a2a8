import type { GpuCommand } from '../commands/registry.js';
import type { Approvals } from '../store/approvals.js';
import type { Audit } from '../store/audit.js';
import type { Leases } from '../store/leases.js';
import type { RateLimiter } from '../store/rate-limiter.js';
import type { Policy } from './policy.js';

// What the guardrails need at run time, built once by the composition root and handed to both the
// listener (authorization, approval cards, clicks) and the workers (audit of job starts and outcomes,
// expiry, leases).

/** How an approval request ended, for gpuops_approvals_total. `requested` counts cards posted. */
export type ApprovalOutcome = 'requested' | 'approved' | 'denied' | 'expired';

export interface Guardrails {
  readonly policy: Policy;
  readonly approvals: Approvals<GpuCommand>;
  readonly audit: Audit;
  readonly leases: Leases;
  /** The policy's rate_limits, counted in Redis; absent in tests of other features. */
  readonly rateLimiter?: RateLimiter;
  readonly onApproval?: ((outcome: ApprovalOutcome) => void) | undefined;
}
