import type { JobRun, Outcome } from '../commands/kit/job-run.js';
import { stepAuditParameters } from '../jobs/job-data.js';
import { auditFieldsOf } from '../store/audit.js';
import { rememberInstanceType } from '../store/instance-types-seen.js';
import { countSpendOf } from '../store/spend-projects.js';
import { startLease } from './lease-jobs.js';
import type { WorkerDeps } from './worker-deps.js';

// What processJob tells the guardrails: each job start and outcome goes to the audit trail, a finished
// job counts its project's spend from then on, and a finished create or start may begin a lease. None of it may fail a job whose work is done: problems
// are logged.

/** Appends a job start or outcome to the audit trail. */
export async function auditJob(
  run: JobRun<WorkerDeps>,
  event: 'start' | 'outcome',
  extra: { readonly outcome: string; readonly durationMs?: number; readonly detail?: string },
): Promise<void> {
  const audit = run.deps.guardrails.audit;
  const { data, job } = run;
  const fields = auditFieldsOf(data.command);
  const projectId = data.ctx.projectId ?? run.deps.defaultProjectId;
  try {
    await audit.append({
      event,
      actor: data.ctx.userId,
      ...fields,
      parameters: {
        ...fields.parameters,
        ...stepAuditParameters(data.ctx.step),
        attempt: job.attemptsMade + 1,
        ...(extra.detail !== undefined ? { detail: extra.detail } : {}),
      },
      ...(projectId ? { project: projectId } : {}),
      outcome: extra.outcome,
      ...(extra.durationMs !== undefined ? { durationMs: extra.durationMs } : {}),
      ...(job.id ? { jobId: job.id } : {}),
      ...(data.approvalId ? { approvalId: data.approvalId } : {}),
      channel: data.ctx.channelId,
    });
  } catch (err) {
    run.deps.log.warn({ err, jobId: job.id }, 'could not append to the audit trail');
  }
}

/** After a job's work is done: remember what it made, start its lease; the outcome may gain a line. */
export async function afterJobDone(run: JobRun<WorkerDeps>, outcome: Outcome): Promise<Outcome> {
  const { data, deps } = run;
  const command = data.command;
  const projectId = data.ctx.projectId ?? deps.defaultProjectId;
  // Spend is counted in every project gpuops acts on, watched by a channel or not (docs/budgets.md).
  if (projectId) {
    await countSpendOf(deps.store, projectId).catch((err: unknown) =>
      deps.log.warn({ err, projectId }, 'could not count the spend of a project'),
    );
  }
  if (command.kind === 'create' && !command.modal) {
    await rememberInstanceType(
      deps.store,
      data.ctx.projectId ?? deps.defaultProjectId,
      command.name,
      command.type,
    ).catch((err: unknown) => deps.log.warn({ err }, 'could not remember an instance type'));
  }
  try {
    const lease = await startLease(run);
    return lease ? { ...outcome, detail: `${outcome.detail} ${lease}` } : outcome;
  } catch (err) {
    deps.log.error({ err, jobId: run.job.id }, 'could not start the lease of a machine');
    return outcome;
  }
}
