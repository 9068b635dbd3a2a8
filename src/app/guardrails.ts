import { type FetchFunction, WebClient } from '@slack/web-api';
import { gpuCommandSchema } from '../commands/registry.js';
import type { Config } from '../config.js';
import type { Logger } from '../log/logger.js';
import type { BotMetrics } from '../obs/bot-metrics.js';

import type { Guardrails } from '../policy/guardrails.js';
import type { Policy } from '../policy/policy.js';
import { createAuditChannelPoster } from '../slack/audit-channel-poster.js';
import { createApprovals } from '../store/approvals.js';
import { createAudit } from '../store/audit.js';
import { createLeases } from '../store/leases.js';
import { createRateLimiter } from '../store/rate-limiter.js';
import type { Store } from '../store/store.js';

// Roles, approvals, leases and the audit trail, shared by the listener and the workers
// (docs/policy.md). The audit trail also posts each entry to the policy's audit channel, if any.

export function createGuardrails(input: {
  readonly config: Config;
  readonly policy: Policy;
  readonly store: Store;
  readonly metrics: BotMetrics;
  readonly slackFetch: FetchFunction;
  readonly log: Logger;
}): Guardrails {
  const { config, policy, store, metrics, log } = input;
  const redis = store.redis;
  const auditChannel = policy.audit.channel;
  // As the listener's client: a 429 is rejected, not waited out behind an unbounded queue, and a
  // failing Slack is retried briefly; the poster skips entries while Slack limits the channel.
  const auditPost = auditChannel
    ? createAuditChannelPoster(
        new WebClient(config.SLACK_BOT_TOKEN, {
          slackApiUrl: config.SLACK_API_URL,
          fetch: input.slackFetch,
          rejectRateLimitedCalls: true,
          retryConfig: { retries: 2 },
        }),
        auditChannel,
        log,
      )
    : undefined;
  return {
    policy,
    approvals: createApprovals(redis, { prefix: store.prefix, command: gpuCommandSchema }),
    audit: createAudit(redis, {
      prefix: store.prefix,
      retentionSeconds: policy.audit.retentionSeconds,
      log,
      ...(auditPost ? { publish: auditPost } : {}),
    }),
    leases: createLeases(redis, { prefix: store.prefix }),
    rateLimiter: createRateLimiter(redis, store.prefix, policy.rateLimits),
    onApproval: (outcome) => metrics.countApproval(outcome),
  };
}
