import { type CommandJobData, commandJobDataSchema } from '../commands/job-payload.js';
import { withDeadline } from '../commands/kit/with-deadline.js';
import type { GpuCommand } from '../commands/registry.js';
import { deliveryOf, describeCommand } from '../commands/registry.js';
import type { JobContext, LeaseTerms, SealedInputs } from '../jobs/job-data.js';
import type { MessageRef } from '../jobs/message-ref.js';
import { type GpuQueue, jobIdFor } from '../jobs/queue.js';
import type { Logger } from '../log/logger.js';
import { renderJobMessage } from '../render/job-message.js';
import type { Store } from '../store/store.js';
import type { RequestPorts } from './ports.js';

export interface EnqueueDeps {
  readonly queue: GpuQueue;
  readonly store: Store;
  readonly ports: RequestPorts;
  readonly log: Logger;
}

export type EnqueueResult =
  | { readonly status: 'queued'; readonly jobId: string; readonly message?: MessageRef }
  | { readonly status: 'duplicate'; readonly jobId: string };

/**
 * How long the same request from the same person counts as a repeat. A change (start, create, rm)
 * sent twice within half a minute is a double submission; a lookup asked again a few seconds later
 * wants fresh data, so it only absorbs a double click.
 */
export function dedupeSeconds(command: GpuCommand): number {
  return deliveryOf(command.kind) === 'channel' ? 30 : 3;
}

/**
 * Turns an accepted request into exactly one job. The same request sent twice within a short window
 * (a double submission, Slack redelivering) finds the first job instead of making a second. A request
 * that changes something first gets its visible channel message, which the job then edits in place.
 */
export interface EnqueueExtra {
  /**
   * The approval that let this request through: it becomes the job id, so however many times the
   * approved request is enqueued there is one job. The dedupe claim is not consulted: the approval's
   * one atomic decision already makes it happen once, and the claim may still be held by the request
   * itself (or by a later repeat of it).
   */
  readonly approvalId?: string;
  readonly sealed?: SealedInputs;
  /** A message already showing this request (the requester's message of an approved request): the job edits it. */
  readonly message?: MessageRef;
  /** The stop time the machine gets once running (policy approvals.lease). */
  readonly lease?: LeaseTerms;
}

/** Same person, channel and command: the key of the dedupe claim. */
export function requestFingerprint(command: GpuCommand, ctx: JobContext): string {
  return jobIdFor(ctx.teamId, ctx.channelId, ctx.userId, JSON.stringify(command));
}

export async function enqueueRequest(
  deps: EnqueueDeps,
  command: GpuCommand,
  ctx: JobContext,
  extra: EnqueueExtra = {},
): Promise<EnqueueResult> {
  const fingerprint = requestFingerprint(command, ctx);
  const jobId = extra.approvalId ?? `${fingerprint}-${ctx.requestedAt}`;
  if (!extra.approvalId) {
    const holder = await withDeadline(
      deps.store.claimRequest(fingerprint, jobId, dedupeSeconds(command)),
      1_500,
      'Redis',
    );
    if (holder !== undefined) return { status: 'duplicate', jobId: holder };
  }

  let message: MessageRef | undefined = extra.message;
  if (!message && deliveryOf(command.kind) === 'channel') {
    const { text, blocks } = renderJobMessage({
      phase: 'queued',
      request: describeCommand(command),
      userId: ctx.userId,
      startedAt: ctx.requestedAt,
      now: ctx.requestedAt,
      jobId,
    });
    try {
      message = await deps.ports.post(ctx.channelId, { text, blocks });
    } catch (err) {
      // Not in the channel, or Slack hiccuped: the job posts its own message when it starts.
      deps.log.warn({ err, jobId }, 'could not post the queued message');
    }
  }

  const data: CommandJobData = commandJobDataSchema.parse({
    v: 1,
    command,
    ctx,
    ...(message ? { message } : {}),
    ...(extra.approvalId ? { approvalId: extra.approvalId } : {}),
    // References to secrets a form sealed in Redis; the secrets themselves never enter the job.
    ...(extra.sealed ? { sealed: extra.sealed } : {}),
    ...(extra.lease ? { lease: extra.lease } : {}),
  });
  try {
    await withDeadline(
      deps.store.recordJob({
        id: jobId,
        kind: command.kind,
        summary: describeCommand(command),
        userId: ctx.userId,
        channelId: ctx.channelId,
        state: 'queued',
        createdAt: ctx.requestedAt,
        updatedAt: ctx.requestedAt,
      }),
      1_500,
      'Redis',
    );
    if (message) await withDeadline(deps.store.setJobMessage(jobId, message), 1_500, 'Redis');
    await withDeadline(deps.queue.add(command.kind, data, { jobId }), 1_500, 'the queue');
  } catch (err) {
    // A message the job did not post (the requester's, of an approved request) is not taken back.
    await undoAccepted(deps, jobId, extra.message ? undefined : message);
    throw err;
  }
  return { status: 'queued', jobId, ...(message ? { message } : {}) };
}

/** Redis failed half-way: take back the "Queued" message and the job record, so nothing says it started. */
async function undoAccepted(
  deps: EnqueueDeps,
  jobId: string,
  message: MessageRef | undefined,
): Promise<void> {
  const undo: Promise<unknown>[] = [
    withDeadline(
      deps.store.updateJob(jobId, { state: 'failed', detail: 'Not started: the queue was unreachable.' }),
      500,
      'Redis',
    ),
  ];
  if (message) undo.push(deps.ports.remove(message));
  for (const result of await Promise.allSettled(undo)) {
    if (result.status === 'rejected')
      deps.log.warn({ err: result.reason, jobId }, 'could not undo a request');
  }
}
