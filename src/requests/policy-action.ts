import { withDeadline } from '../commands/kit/with-deadline.js';
import type { GpuCommand } from '../commands/registry.js';
import type { JobContext } from '../jobs/job-data.js';
import { auditFieldsOf } from '../store/audit.js';
import type { AcceptDeps } from './accept-request.js';
import { type EnqueueResult, enqueueRequest } from './enqueue-request.js';

// A change the policy itself decided (an idle machine nobody answered for): no person to check or
// approver to ask, but the same job and the same audit trail as any request, so nothing changes the
// cloud behind the queue's back.

export interface PolicyAction {
  readonly command: GpuCommand;
  /** Where the job's message goes (a channel watching the project) and the project it acts in. */
  readonly channelId: string;
  readonly projectId: string;
  /** Who acts: the bot's own Slack user, so messages name it. */
  readonly actorId: string;
  /** Why, for the audit trail: `idle for 2h, no answer to the alert for 1h`. */
  readonly reason: string;
}

export async function submitPolicyAction(deps: AcceptDeps, action: PolicyAction): Promise<EnqueueResult> {
  const ctx: JobContext = {
    teamId: 'gpuops',
    channelId: action.channelId,
    userId: action.actorId,
    userName: 'gpuops policy',
    projectId: action.projectId,
    requestedAt: Date.now(),
  };
  const result = await enqueueRequest(deps, action.command, ctx);
  const fields = auditFieldsOf(action.command);
  await withDeadline(
    deps.guardrails.audit.append({
      event: 'request',
      actor: action.actorId,
      ...fields,
      parameters: { ...fields.parameters, reason: action.reason, by: 'policy' },
      project: action.projectId,
      channel: action.channelId,
      outcome: result.status === 'queued' ? 'queued' : 'duplicate',
      jobId: result.jobId,
    }),
    1_500,
    'Redis',
  ).catch((err: unknown) => deps.log.warn({ err }, 'could not audit a policy action'));
  return result;
}
