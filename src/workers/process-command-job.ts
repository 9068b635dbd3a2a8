import { type Job, UnrecoverableError } from 'bullmq';
import { type CloudNetworkError, CloudTimeoutError } from '../cloud/index.js';
import { handlerFor } from '../commands/handlers.js';
import { type CommandJobData, parseCommandJobData } from '../commands/job-payload.js';
import { finishStep } from '../commands/kit/finish-step.js';
import { classifyFailure, PermanentJobError } from '../commands/kit/job-errors.js';
import { cloudWaitText, JobRun } from '../commands/kit/job-run.js';
import { discardSealed } from '../commands/kit/sealed-input.js';
import type { JobData } from '../jobs/job-data.js';
import { inSpan } from '../obs/trace-spans.js';
import { isNoAnswer, whileRunning } from './cloud-wait.js';
import { afterJobDone, auditJob } from './guardrail-hooks.js';
import { awaitTurn, leaveTurn, type QueueTurn } from './machine-order.js';
import type { WorkerDeps } from './worker-deps.js';

// One attempt of a command's job. Loaded on the first command a worker runs (createWorker), not at
// start-up: the handlers of every family and what they use are most of an idle bot's code.

/** Runs one attempt of a command's job: validate, dispatch, report; decides retry or end. */
export async function processCommandJob(
  job: Job<JobData>,
  deps: WorkerDeps,
  signal: AbortSignal,
  /** Absent (a job run outside a worker, in tests): no ordering on its machine. */
  queue?: QueueTurn,
): Promise<string> {
  let data: CommandJobData;
  try {
    data = parseCommandJobData(job.data);
  } catch (err) {
    deps.log.error({ jobId: job.id, name: job.name, err }, 'job data rejected');
    throw new UnrecoverableError(classifyFailure(err).message);
  }
  // Before acting: the record, and where the request's message is (a held job's "Queued" message is
  // stored apart), so that showing the answer needs no Redis read that an outage could lose.
  const { record, message } = await deps.store.jobAndMessage(job.id!);
  // A job whose final answer is recorded never acts again, whatever its lock did: a worker that lost
  // the lock in a Redis outage longer than it, or a finished job retried, must not repeat a start,
  // stop or delete the person was already told about (the record outlives BullMQ's: docs/operations.md).
  if (record?.state === 'done' || record?.state === 'failed') {
    const answered = { ...record, state: record.state };
    const again = new JobRun(job, data, deps, signal, answered, message);
    // Recorded, but the attempt died before marking it shown (Redis or the process went away under
    // it): show the same answer again, in the same place.
    if (!record.answered) await again.reshow(answered);
    // Its workflow step waits for it until Slack times it out: complete it from the recorded outcome.
    const step = data.ctx.step;
    if (step && !record.stepDone) {
      await finishStep(
        deps,
        step,
        record.state === 'done'
          ? { ok: true, data: record.outputs ?? {} }
          : { ok: false, error: record.detail ?? 'The job failed.' },
      );
      await recordStepDone(again);
    }
    await leaveTurn(deps, data, job.id!);
    deps.log.warn(
      { jobId: job.id, name: job.name, state: record.state, shownNow: !record.answered },
      'job already answered; not run again',
    );
    return record.detail ?? record.state;
  }
  const run = new JobRun(job, data, deps, signal, record, message);
  // Requests on one machine act in the order accepted: an earlier one not ended yet goes first (this
  // attempt then ends here, delayed, and the job tries again shortly).
  if (queue) await awaitTurn(run, queue);
  // An approved request's record is the source of truth, not BullMQ's job ids: it is marked running in
  // one atomic step before anything acts, so a request that lapsed (its messages say it never ran)
  // stays unrun, and a repair never queues again a request that ran (requests/drive-approved.ts).
  if (data.approvalId && (await deps.guardrails.approvals.advance(data.approvalId, 'running')) === 'lapsed') {
    deps.log.warn({ jobId: job.id, name: job.name }, 'approved request lapsed before its job ran; not run');
    await leaveTurn(deps, data, job.id!);
    return 'not run: the approved request lapsed before its job could be stored';
  }
  // A job that waited past the response_url's 30 minutes (held, retried, approved late) keeps it no longer.
  await forgetResponseUrl(run, false);
  const handler = handlerFor(data.command.kind);
  const attempts = job.opts.attempts ?? 1;
  const startedAt = Date.now();
  // The start goes on the audit trail while the job gets going (auditJob never throws); it is awaited
  // before the outcome, which therefore always follows it.
  let startAudited: Promise<void> = Promise.resolve();
  try {
    if (!handler)
      throw new PermanentJobError(`\`${run.request}\` is not handled by this version of gpuops yet.`);
    const attemptNote = `attempt ${job.attemptsMade + 1} of ${attempts}`;
    startAudited = auditJob(run, 'start', { outcome: 'started' });
    await run.update(
      'working',
      job.attemptsMade === 0
        ? 'Working…'
        : run.toldCloudWait
          ? cloudWaitText(attemptNote)
          : `Working (${attemptNote})…`,
    );
    // A cloud call that gets no answer tells the requester at its first retry, not after the last.
    const command = run.data.command;
    const handled = await whileRunning(
      () => void run.noticeCloudWait(),
      () =>
        inSpan(`gpuops.handler ${command.kind}`, { 'gpuops.command.kind': command.kind }, () =>
          handler(run, command),
        ),
    );
    await startAudited;
    const outcome = await afterJobDone(run, handled);
    await inSpan('gpuops.answer', { 'gpuops.outcome': 'done' }, () => run.finish('done', outcome));
    await leaveTurn(deps, data, job.id!);
    await forgetResponseUrl(run, true);
    await auditJob(run, 'outcome', { outcome: 'done', durationMs: Date.now() - startedAt });
    // A workflow step waits for this job: its outputs are the outcome's data.
    const step = run.data.ctx.step;
    if (step) {
      await finishStep(deps, step, { ok: true, data: outcome.outputs ?? {} });
      await recordStepDone(run);
    }
    await discardSealed(run.data, deps.sealer, deps.log);
    deps.log.info({ jobId: job.id, name: job.name, attempt: job.attemptsMade + 1 }, 'job done');
    return outcome.detail;
  } catch (err) {
    if (signal.aborted) throw err;
    const failure = classifyFailure(err);
    const last = failure.permanent || job.attemptsMade + 1 >= attempts;
    deps.log.warn(
      { jobId: job.id, name: job.name, attempt: job.attemptsMade + 1, permanent: failure.permanent, err },
      'job attempt failed',
    );
    const noAnswer = isNoAnswer(err);
    const detail = noAnswer && !failure.permanent ? gaveUpText(err, attempts) : failure.message;
    try {
      if (last) {
        await inSpan('gpuops.answer', { 'gpuops.outcome': 'failed' }, () => run.finish('failed', { detail }));
        await leaveTurn(deps, data, job.id!);
        await forgetResponseUrl(run, true);
      } else if (noAnswer) {
        await run.noticeCloudWait({
          attemptNote: `attempt ${job.attemptsMade + 2} of ${attempts} next`,
          again: true,
        });
        await run.rememberCloudWait();
      } else {
        await run.update(
          'working',
          `${failure.message} Retrying (attempt ${job.attemptsMade + 2} of ${attempts})…`,
        );
      }
      // What the requester should see before the next attempt, even within the quiet period.
      if (!last) await run.flushProgress();
    } catch (reportErr) {
      deps.log.error({ jobId: job.id, err: reportErr }, 'could not report the job failure to Slack');
    }
    await startAudited;
    await auditJob(run, 'outcome', {
      outcome: last ? 'failed' : 'retrying',
      durationMs: Date.now() - startedAt,
      detail: failure.message,
    });
    if (last) await discardSealed(run.data, deps.sealer, deps.log);
    // A workflow step waiting for this job fails with the same sentence the requester reads.
    const step = run.data.ctx.step;
    if (last && step) {
      await finishStep(deps, step, { ok: false, error: detail });
      await recordStepDone(run);
    }
    if (failure.permanent) throw new UnrecoverableError(failure.message);
    throw err;
  }
}

/** The response_url leaves the job's data once answered or expired (BullMQ keeps it for days); never throws. */
async function forgetResponseUrl(run: JobRun, always: boolean): Promise<void> {
  await run
    .forgetResponseUrl(always)
    .catch((err: unknown) =>
      run.deps.log.warn({ jobId: run.job.id, err }, 'could not drop the response_url from the job'),
    );
}

/**
 * Marks the job's workflow step completed; never throws (the job has answered: a failure here must not
 * turn it into a failed one). Unmarked, an attempt run again completes the step again, which is harmless.
 */
async function recordStepDone(run: JobRun): Promise<void> {
  await run
    .recordStepDone()
    .catch((err: unknown) =>
      run.deps.log.warn({ jobId: run.job.id, err }, 'could not record that the workflow step was completed'),
    );
}

/** The final answer when the cloud never answered: what happened, and what to check. */
function gaveUpText(err: unknown, attempts: number): string {
  const why =
    err instanceof CloudTimeoutError
      ? `no answer within ${err.timeoutMs} ms`
      : ((err as CloudNetworkError).errCode ?? 'no connection');
  return (
    `The cloud API did not answer (${why}), and gpuops gave up${attempts > 1 ? ` after ${attempts} attempts` : ''}. Try again later; ` +
    'if it lasts, ask whoever runs gpuops to check CLOUD_API_URL (PLATFORM_API_URL for SSH keys and ' +
    'configurations), that the cloud is up, and /readyz.'
  );
}
