import { addsRunRate, type GpuCommand } from '../commands/registry.js';
import type { JobContext } from '../jobs/job-data.js';
import { groupsInPolicy, roleOf } from '../policy/decide.js';
import { auditFieldsOf } from '../store/audit.js';
import { instanceOwners } from '../store/instance-owners.js';
import { type AcceptDeps, type AcceptExtra, record } from './accept-kit.js';
import { type AcceptResult, acceptRequest, checkAccess, type Refused } from './accept-request.js';
import { type EnqueueResult, enqueueRequest } from './enqueue-request.js';

// One firing of a power schedule (`/gpu schedule stop …`): a start or stop request made as the
// schedule's owner, whose role is checked again now (it may have been taken away since), with an audit
// entry that names the schedule. A start goes through the same door as a typed `/gpu start`: priced,
// given the same lease, and sent to an approver when the firing goes beyond what was agreed when the
// schedule was made (`scheduled`). docs/schedules.md.

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
  /** For a start: within the schedule's approval, or beyond it (and why). Absent: today's rule decides. */
  readonly scheduled?: AcceptExtra['scheduled'];
}

export type ScheduledResult = EnqueueResult | AcceptResult | Refused;

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
    schedule: action.scheduleId,
  };
  // A start adds run rate: priced, leased and approved like a typed one.
  if (addsRunRate(action.command)) {
    return acceptRequest(deps, action.command, ctx, action.scheduled ? { scheduled: action.scheduled } : {});
  }
  // A stop saves money: no price, no approval, no lease; the role is still checked.
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

/**
 * Of a tag schedule's machines, the ids its owner may operate: an admin (by their own grants, users
 * or groups) every one, anyone else those gpuops made for them (a machine made elsewhere, or by
 * someone else, is left alone).
 */
export async function operableBy(
  deps: AcceptDeps,
  owner: { readonly userId: string; readonly channelId: string },
  instanceIds: readonly string[],
): Promise<ReadonlySet<string>> {
  const { policy } = deps.guardrails;
  const userGroups = await deps.ports.groupsOf(owner.userId, groupsInPolicy(policy));
  // The owner's own roles: a firing is typed in no channel, so no channel's grant counts for it.
  if (roleOf({ policy, userId: owner.userId, userGroups }).role === 'admin') {
    return new Set(instanceIds);
  }
  const owners = await instanceOwners(deps.store, instanceIds);
  return new Set(instanceIds.filter((_, i) => owners[i] === owner.userId));
}

/** A firing the policy refused as a whole or in part, for the audit trail. */
export interface ScheduleRefusal {
  readonly scheduleId: string;
  readonly ownerId: string;
  readonly channelId: string;
  readonly projectId: string;
  readonly action: string;
  /** Why, in words: `its owner is now a guest account`, `not its owner's to operate`. */
  readonly why: string;
  /** The machines left alone, when the refusal is about some of them. */
  readonly targets?: readonly string[];
}

/**
 * Puts a firing the policy refused on the audit trail as `refused`, as the owner's: a schedule paused
 * because its owner may no longer use gpuops, or a tag's machines left alone because they are not the
 * owner's to operate. (A firing refused by the owner's role is recorded by submitScheduledAction.)
 */
export async function recordScheduleRefusal(deps: AcceptDeps, refusal: ScheduleRefusal): Promise<void> {
  await record(deps, deps.guardrails, {
    event: 'request',
    actor: refusal.ownerId,
    operation: refusal.action,
    ...(refusal.targets ? { target: refusal.targets.join(', ') } : {}),
    project: refusal.projectId,
    channel: refusal.channelId,
    parameters: { schedule: refusal.scheduleId, by: 'schedule', why: refusal.why },
    outcome: 'refused',
  });
}
