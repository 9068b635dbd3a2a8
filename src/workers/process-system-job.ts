import { type Job, UnrecoverableError } from 'bullmq';
import { classifyFailure } from '../commands/kit/job-errors.js';
import { type CatalogRefreshData, parseSystemJobData, type SystemJobData } from '../jobs/job-data.js';
import { expireApprovals } from './approval-expiry.js';
import { refreshCatalog, showCatalogFailure, showCatalogInForm } from './catalog-refresh.js';
import { remindLease, stopLease } from './lease-jobs.js';
import type { WorkerDeps } from './worker-deps.js';

// System jobs (no person asked, so no channel message): validated, dispatched by their `system` name,
// retried like request jobs on transient failures.

async function catalogRefresh(
  job: Job,
  data: CatalogRefreshData,
  deps: WorkerDeps,
  signal: AbortSignal,
): Promise<string> {
  const projectId = data.projectId ?? deps.defaultProjectId;
  try {
    const entry = await refreshCatalog(deps, projectId, signal);
    if (data.view) await showCatalogInForm(deps, data.view, entry);
    const { catalog } = entry;
    return `catalogue of ${projectId ?? 'no project'}: ${catalog.configurations?.length ?? 0} configurations, ${catalog.instanceTypes.length} instance types${catalog.problems.length > 0 ? `, ${catalog.problems.length} problem(s)` : ''}`;
  } catch (err) {
    const failure = classifyFailure(err);
    const last = failure.permanent || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    if (last && data.view && !signal.aborted) {
      await showCatalogFailure(deps, data.view, failure.message).catch((showErr: unknown) =>
        deps.log.warn({ err: showErr }, 'could not tell the form that the catalogue failed'),
      );
    }
    throw err;
  }
}

/** Runs one attempt of a system job; the data is checked again, as it may come from an older version. */
export async function processSystemJob(job: Job, deps: WorkerDeps, signal: AbortSignal): Promise<string> {
  let data: SystemJobData;
  try {
    data = parseSystemJobData(job.data);
  } catch (err) {
    deps.log.error({ jobId: job.id, name: job.name, err }, 'system job data rejected');
    throw new UnrecoverableError(classifyFailure(err).message);
  }
  try {
    switch (data.system) {
      case 'catalog.refresh':
        return await catalogRefresh(job, data, deps, signal);
      case 'approvals.expire':
        return await expireApprovals(deps);
      case 'requests.sweep':
        return deps.sweep ? await deps.sweep() : 'no sweeper in this process';
      case 'lease.remind':
        return await remindLease(deps, data);
      case 'lease.stop':
        return await stopLease(deps, data);
    }
  } catch (err) {
    if (signal.aborted) throw err;
    const failure = classifyFailure(err);
    deps.log.warn(
      { jobId: job.id, name: job.name, attempt: job.attemptsMade + 1, permanent: failure.permanent, err },
      'system job attempt failed',
    );
    if (failure.permanent) throw new UnrecoverableError(failure.message);
    throw err;
  }
}
