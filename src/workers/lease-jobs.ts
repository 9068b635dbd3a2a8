import { leaseEnded, leaseReminder } from '../commands/approvals/lease-messages.js';
import { plainDate } from '../commands/approvals/render.js';
import { leasedMachine } from '../commands/effects.js';
import { type CommandJobData, commandJobDataSchema } from '../commands/job-payload.js';
import type { JobRun } from '../commands/kit/job-run.js';
import { describeCommand, effectsOf } from '../commands/registry.js';
import { scheduleLease } from '../jobs/guardrail-jobs.js';
import type { LeaseJobData } from '../jobs/job-data.js';
import { SYSTEM_ACTOR } from '../store/approvals.js';
import type { Lease } from '../store/leases.js';
import type { WorkerDeps } from './worker-deps.js';

// Leases on the worker side (docs/policy.md, "Lease"): a job that launches or starts a machine (its
// spec's effects) whose request carried
// lease terms starts the lease when it is done; the reminder DMs the owner an Extend button; at the
// stop time a normal `stop` job is queued, exactly as if someone had typed `/gpu stop`.

/**
 * Starts the lease of a job that made a costly machine run, and schedules its reminder and stop.
 * Returns a sentence for the job's final message, or undefined when the job carries no lease.
 */
export async function startLease(run: JobRun<WorkerDeps>): Promise<string | undefined> {
  const { data, deps } = run;
  const guardrails = deps.guardrails;
  const terms = data.lease;
  const command = data.command;
  // The machine its effects launch by name or start; a request carries terms only when there is one.
  const instance = leasedMachine(effectsOf(command));
  if (!terms || !deps.queue || instance === undefined) return undefined;
  const now = run.now();
  const projectId = data.ctx.projectId ?? deps.defaultProjectId;
  const { lease } = await guardrails.leases.start({
    id: run.job.id!,
    owner: data.ctx.userId,
    instance,
    teamId: data.ctx.teamId,
    channelId: data.ctx.channelId,
    ...(projectId ? { projectId } : {}),
    request: run.request,
    ...(terms.cost ? { cost: terms.cost } : {}),
    extendSeconds: terms.seconds,
    remindBeforeSeconds: terms.remindBeforeSeconds,
    startedAt: now,
    stopAt: now + terms.seconds * 1000,
  });
  await scheduleLease(deps.queue, lease, now);
  return `Leased: it stops at ${plainDate(lease.stopAt)} unless extended (a reminder comes first).`;
}

/** Sends the reminder with Extend, if the lease still ends when this job was made for. */
export async function remindLease(deps: WorkerDeps, data: LeaseJobData): Promise<string> {
  const lease = await current(deps, data);
  if (!lease) return 'lease extended, stopping or gone: no reminder';
  await deps.slack.chat.postMessage({ channel: lease.owner, ...leaseReminder(lease, now(deps)) });
  return `reminded ${lease.owner} about ${lease.instance}`;
}

/** Queues the normal stop job when the lease ends (once, however many workers see the job). */
export async function stopLease(deps: WorkerDeps, data: LeaseJobData): Promise<string> {
  const guardrails = deps.guardrails;
  if (!deps.queue) return 'no queue to stop it through';
  if (!(await guardrails.leases.markStopping(data.leaseId, data.stopAt))) {
    return 'lease extended or already stopping';
  }
  const lease = await guardrails.leases.get(data.leaseId);
  if (!lease) return 'lease gone';
  const requestedAt = now(deps);
  const job: CommandJobData = commandJobDataSchema.parse({
    v: 1,
    command: { kind: 'stop', instance: lease.instance },
    ctx: {
      teamId: lease.teamId,
      channelId: lease.channelId,
      userId: lease.owner,
      ...(lease.projectId ? { projectId: lease.projectId } : {}),
      requestedAt,
    },
  });
  const jobId = `lease-${lease.id}-${lease.stopAt}`;
  await deps.store.recordJob({
    id: jobId,
    kind: 'stop',
    summary: describeCommand(job.command),
    userId: lease.owner,
    channelId: lease.channelId,
    state: 'queued',
    createdAt: requestedAt,
    updatedAt: requestedAt,
  });
  await deps.queue.add('stop', job, { jobId });
  await guardrails.audit
    .append({
      event: 'request',
      actor: SYSTEM_ACTOR,
      operation: 'stop',
      target: lease.instance,
      ...(lease.projectId ? { project: lease.projectId } : {}),
      parameters: { reason: 'lease ended', lease: lease.id, owner: lease.owner },
      outcome: 'queued',
      jobId,
      channel: lease.channelId,
    })
    .catch((err: unknown) => deps.log.warn({ err }, 'could not audit a lease stop'));
  await deps.slack.chat
    .postMessage({ channel: lease.owner, ...leaseEnded(lease) })
    .catch((err: unknown) => deps.log.warn({ err }, 'could not tell the owner their lease ended'));
  return `lease of ${lease.instance} ended: stop queued as ${jobId}`;
}

async function current(deps: WorkerDeps, data: LeaseJobData): Promise<Lease | undefined> {
  const lease = await deps.guardrails.leases.get(data.leaseId);
  return lease && lease.state === 'active' && lease.stopAt === data.stopAt ? lease : undefined;
}

function now(deps: WorkerDeps): number {
  return (deps.now ?? Date.now)();
}
