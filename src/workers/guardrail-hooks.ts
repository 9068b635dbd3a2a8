import { launchedType } from '../commands/effects.js';
import type { JobRun, Outcome } from '../commands/kit/job-run.js';
import { effectsOf } from '../commands/registry.js';
import { stepAuditParameters } from '../jobs/job-data.js';
import { auditFieldsOf } from '../store/audit.js';
import { readCatalog } from '../store/catalog-cache.js';
import { noteMachinesChangedIn } from '../store/home-state.js';
import { catalogAndTypeOf, rememberDeleted, rememberInstanceType } from '../store/instance-types-seen.js';
import { countSpendIn } from '../store/spend-projects.js';
import { startLease } from './lease-jobs.js';
import type { WorkerDeps } from './worker-deps.js';

// What processJob tells the guardrails: each job start and outcome goes to the audit trail, a finished
// job counts its project's spend from then on, what it made or deleted is written down for the checks
// of the next requests, and a job that launched or started a machine may begin a lease. None of it
// may fail a job whose work is done: problems are logged.

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
  const projectId = data.ctx.projectId ?? deps.defaultProjectId;
  // All before the requester reads the answer, side by side (none depends on another).
  await Promise.all([
    projectId
      ? countAndStamp(run, projectId).catch((err: unknown) =>
          deps.log.warn(
            { err, projectId },
            'could not count the spend of a project or note that a machine changed',
          ),
        )
      : undefined,
    rememberLaunched(run).catch((err: unknown) =>
      deps.log.warn({ err }, 'could not remember an instance type'),
    ),
    // A request for it from then on is answered at once.
    rememberDestroyed(run).catch((err: unknown) =>
      deps.log.warn({ err }, 'could not remember a deleted instance'),
    ),
  ]);
  try {
    const lease = await startLease(run);
    return lease ? { ...outcome, detail: `${outcome.detail} ${lease}` } : outcome;
  } catch (err) {
    deps.log.error({ err, jobId: run.job.id }, 'could not start the lease of a machine');
    return outcome;
  }
}

/**
 * The type of the machine a job launched by name (its spec's effects), so that a start or a check
 * right after it knows the machine before the next listing does. A copy has its source's type.
 */
async function rememberLaunched(run: JobRun<WorkerDeps>): Promise<void> {
  const { data, deps } = run;
  const effects = effectsOf(data.command);
  const name = effects.launches?.instance;
  if (name === undefined) return;
  const projectId = data.ctx.projectId ?? deps.defaultProjectId;
  const source = effects.target?.instance;
  const targetType =
    source !== undefined ? (await catalogAndTypeOf(deps.store, projectId, source)).type : undefined;
  const type = launchedType(effects, targetType);
  if (type !== undefined) await rememberInstanceType(deps.store, projectId, name, type);
}

/**
 * In one round trip: spend is counted in every project gpuops acts on, watched by a channel or not
 * (docs/budgets.md); and a job whose spec declares it changes machines (a start, stop or delete of its
 * target, machines by tag, a launch) stamps its project, so that a Home tab opened from then on
 * trusts no look at the project taken before.
 */
async function countAndStamp(run: JobRun<WorkerDeps>, projectId: string): Promise<void> {
  const { data, deps } = run;
  const effects = effectsOf(data.command);
  const changes = effects.target?.does !== undefined || effects.tag !== undefined || effects.launches;
  const tx = countSpendIn(deps.store.redis.multi(), deps.store.prefix, projectId);
  if (changes) noteMachinesChangedIn(tx, deps.store, projectId, run.now());
  const replies = (await tx.exec()) ?? [];
  const failed = replies.find(([err]) => err !== null);
  if (failed) throw failed[0];
}

/**
 * The machine a job deleted (its spec's effects), by the name or id the request gave and by the
 * other as the cached listing knows it: that listing is refreshed every few minutes and names it
 * until then, so without this a second request for it would be sent on (to an approver, for an rm).
 */
async function rememberDestroyed(run: JobRun<WorkerDeps>): Promise<void> {
  const { data, deps } = run;
  const target = effectsOf(data.command).target;
  if (target?.does !== 'destroys') return;
  const projectId = data.ctx.projectId ?? deps.defaultProjectId;
  const ref = target.instance;
  const listed = (await readCatalog(deps.store, projectId))?.catalog.instances?.find(
    (i) => i.name === ref || i.id === ref,
  );
  await rememberDeleted(deps.store, projectId, [ref, ...(listed ? [listed.name, listed.id] : [])], run.now());
}
