import type { GpuCommand } from '../commands/registry.js';
import type { JobContext } from '../jobs/job-data.js';
import { auditFieldsOf } from '../store/audit.js';
import { type AcceptDeps, record } from './accept-kit.js';
import { checkAccess, type Refused } from './accept-request.js';
import { type EnqueueResult, enqueueRequest } from './enqueue-request.js';

// One firing of a power schedule (`/gpu schedule stop …`): a start or stop request made as the
// schedule's owner, whose role is checked again now (it may have been taken away since), with no
// approval step (a costly start had its approval when the schedule was made) and an audit entry that
// names the schedule. docs/schedules.md.

export interface ScheduledAction {
  /** `start` or `stop` of one instance. */
  readonly command: GpuCommand;
  readonly scheduleId: string;
  /** The person who made the schedule: the request is theirs. */
  readonly ownerId: string;
  /** Where the schedule was made: the job's message goes there. */
  readonly channelId: string;
  readonly projectId: string;
  /** When this firing was due (ms): the same firing run twice makes one job. */
  readonly firedAt: number;
}

export type ScheduledResult = EnqueueResult | Refused;

export async function submitScheduledAction(
  deps: AcceptDeps,
  action: ScheduledAction,
): Promise<ScheduledResult> {
  const ctx: JobContext = {
    teamId: 'gpuops',
    channelId: action.channelId,
    userId: action.ownerId,
    userName: `schedule ${action.scheduleId}`,
    projectId: action.projectId,
    requestedAt: action.firedAt,
  };
  const fields = auditFieldsOf(action.command);
  const audited = { ...fields.parameters, schedule: action.scheduleId, by: 'schedule' };
  const base = {
    event: 'request' as const,
    actor: action.ownerId,
    ...fields,
    project: action.projectId,
    channel: action.channelId,
  };
  const refused = await checkAccess(deps, action.command.kind, ctx);
  if (refused) {
    await record(deps, deps.guardrails, {
      ...base,
      parameters: { ...audited, role: refused.role, needed: refused.needed },
      outcome: 'refused',
    });
    return refused;
  }
  const result = await enqueueRequest(deps, action.command, ctx);
  await record(deps, deps.guardrails, {
    ...base,
    parameters: audited,
    outcome: result.status === 'queued' ? 'queued' : 'duplicate',
    jobId: result.jobId,
  });
  return result;
}
