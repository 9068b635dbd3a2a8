import { setTimeout as sleep } from 'node:timers/promises';
import type { Job } from 'bullmq';
import { type CommandJobData, commandJobDataSchema } from '../commands/job-payload.js';
import { CANNOT_POST, slackCode } from '../commands/kit/slack-failure.js';
import { withDeadline } from '../commands/kit/with-deadline.js';
import type { GpuCommand } from '../commands/registry.js';
import { changedMachineOf, deliveryOf, describeCommand, operationClassOf } from '../commands/registry.js';
import type { JobContext, LeaseTerms, SealedInputs } from '../jobs/job-data.js';
import type { MessageRef } from '../jobs/message-ref.js';
import { type GpuQueue, jobIdFor } from '../jobs/queue.js';
import { MaybeQueuedError } from '../jobs/replicated.js';
import type { Logger } from '../log/logger.js';
import { renderJobMessage } from '../render/job-message.js';
import type { PreparedEntry } from '../store/audit.js';
import { machineOrderId } from '../store/machine-order.js';
import type { AcceptJobAnswer, Store } from '../store/store.js';
import { type AddGate, GaveUpError, neverSent } from './add-gate.js';
import type { ChatMessage, RequestPorts } from './ports.js';

export interface EnqueueDeps {
  readonly queue: GpuQueue;
  readonly store: Store;
  readonly ports: RequestPorts;
  readonly log: Logger;
  /**
   * On a replicated Redis: resolves once the job just added is on enough replicas, else throws and
   * the request is taken back (src/jobs/replicated.ts).
   */
  readonly replicated?: (() => Promise<void>) | undefined;
  /**
   * On a replicated Redis: why no change can be stored now (no replica), else undefined. Changes are
   * then refused before anything is stored; lookups go on (jobs/replicated.ts replicaShortage).
   */
  readonly degraded?: (() => Promise<string | undefined>) | undefined;
}

export type EnqueueResult =
  | {
      readonly status: 'queued';
      readonly jobId: string;
      /** The id of the request's audit entry, when `audit` was given and stored with the job record. */
      readonly auditId?: string;
      readonly message?: MessageRef;
      /**
       * With `deferPosts`: the Slack posts left for after the acknowledgement. Resolves with what to
       * tell the requester when a post failed (where the bot cannot post, what to do), else undefined.
       * Never throws.
       */
      readonly followUp?: () => Promise<string | undefined>;
    }
  | {
      readonly status: 'duplicate';
      readonly jobId: string;
      /** Slack delivered this very request before (same trigger), rather than a person repeating it. */
      readonly replay?: true;
    };

/**
 * How long a job deferred by `deferPosts` waits for its "Queued" message before it starts anyway (the
 * listener releases it as soon as the message is up; this only matters if the listener died first).
 */
export const ANNOUNCE_HOLD_MS = 10_000;

/**
 * What the requester is told when a post for their request failed: in a conversation the bot cannot
 * post to, what to do about it; else that the request goes on and its message follows.
 */
export function postProblemNotice(code: string, what: string): string {
  if (code === 'is_archived') {
    return `:warning: This channel is archived, so I cannot post here. ${what} I will answer you privately; use an active channel next time.`;
  }
  if (CANNOT_POST.has(code)) {
    return `:warning: I cannot post in this conversation (Slack said "${code}"): invite @gpuops here, or use a public channel. ${what} If I still cannot post there, I will answer you privately.`;
  }
  return `:hourglass_flowing_sand: ${what} Slack is slow to take my messages right now (it said "${code}"); the progress follows shortly.`;
}

/**
 * How long the same request from the same person counts as a repeat, at most: only while the first is
 * still pending and nothing else was asked of its target since (Store.acceptJob). A change (start,
 * create, rm) sent twice within half a minute is a double submission; a lookup (a command that changes
 * nothing, however it is delivered) asked again a few seconds later wants fresh data, so it only
 * absorbs a double click.
 */
export function dedupeSeconds(command: GpuCommand): number {
  return operationClassOf(command.kind) === 'read' ? LOOKUP_REPEAT_SECONDS : CHANGE_REPEAT_SECONDS;
}

const LOOKUP_REPEAT_SECONDS = 3;
export const CHANGE_REPEAT_SECONDS = 30;

/**
 * The machine or cluster a change acts on, within the request's project (else its channel): a change
 * asked of it ends the repeat window of every earlier request on it. A lookup marks nothing.
 */
export function requestTarget(command: GpuCommand, ctx: JobContext): string | undefined {
  if (operationClassOf(command.kind) === 'read') return undefined;
  const named =
    'instance' in command && typeof command.instance === 'string'
      ? `instance:${command.instance}`
      : 'cluster' in command && typeof command.cluster === 'string'
        ? `cluster:${command.cluster}`
        : undefined;
  return named === undefined ? undefined : jobIdFor(ctx.projectId ?? ctx.channelId, named);
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
  /**
   * The caller acknowledges Slack first and posts afterwards (the listener, within Slack's 3 s): no
   * Slack call here; the job is held until `followUp` has posted its "Queued" message.
   */
  readonly deferPosts?: boolean;
  /**
   * Slack's trigger id of a typed command, claimed for `seconds` (its signature window) with the
   * request's dedupe claim and record: the same delivery sent again starts nothing.
   */
  readonly trigger?: { readonly id: string; readonly seconds: number };
  /** The request's audit entry, stored with the job record (Store.acceptJob): a repeat stores none. */
  readonly audit?: PreparedEntry;
  /** The caller's point of no return: once it gave up waiting, the job is not added (GaveUpError). */
  readonly gate?: AddGate;
}

/** Same person, channel and command: the key of the dedupe claim. */
export function requestFingerprint(command: GpuCommand, ctx: JobContext): string {
  // Two runs of a workflow are two requests; Slack redelivering one run's event is the same one.
  const step = ctx.step ? [ctx.step.executionId] : [];
  return jobIdFor(ctx.teamId, ctx.channelId, ctx.userId, JSON.stringify(command), ...step);
}

/** The id of the job a request becomes (an approved one takes its approval's id instead). */
export function requestJobId(
  command: GpuCommand,
  ctx: JobContext,
  fingerprint = requestFingerprint(command, ctx),
): string {
  return `${fingerprint}-${ctx.requestedAt}`;
}

export async function enqueueRequest(
  given: EnqueueDeps,
  command: GpuCommand,
  ctx: JobContext,
  extra: EnqueueExtra = {},
): Promise<EnqueueResult> {
  // A lookup changes nothing: losing its job with a primary is harmless, so it needs no second copy
  // and is answered even while Redis has no replica (degraded mode, docs/reliability.md).
  const deps = operationClassOf(command.kind) === 'read' ? { ...given, replicated: undefined } : given;
  const fingerprint = requestFingerprint(command, ctx);
  const jobId = extra.approvalId ?? requestJobId(command, ctx, fingerprint);
  const audit = extra.audit;
  const target = requestTarget(command, ctx);
  // The machine it changes: the job joins its order in the same step (src/store/machine-order.ts).
  const changes = changedMachineOf(command);
  const machine = changes === undefined ? undefined : machineOrderId(ctx.projectId, changes);
  // One step claims the trigger and the request (unless an approval already decided it happens once)
  // and records the job: a failure after it takes the record back.
  let accepted: AcceptJobAnswer;
  try {
    accepted = await withDeadline(
      deps.store.acceptJob({
        record: {
          id: jobId,
          kind: command.kind,
          summary: describeCommand(command),
          userId: ctx.userId,
          channelId: ctx.channelId,
          state: 'queued',
          createdAt: ctx.requestedAt,
          updatedAt: ctx.requestedAt,
        },
        ...(extra.trigger ? { trigger: extra.trigger } : {}),
        ...(extra.approvalId ? {} : { claim: { fingerprint, seconds: dedupeSeconds(command) } }),
        ...(target ? { target: { id: target, seconds: CHANGE_REPEAT_SECONDS } } : {}),
        ...(machine ? { machine } : {}),
        ...(audit ? { audit } : {}),
      }),
      1_500,
      'Redis',
    );
  } catch (err) {
    // The step may have run with its answer lost: nothing may say the request is queued.
    await undoAccepted(deps, jobId, undefined, false);
    throw err;
  }
  if (accepted.status !== 'recorded') {
    return {
      status: 'duplicate',
      jobId: accepted.holder,
      ...(accepted.status === 'replay' ? { replay: true as const } : {}),
    };
  }

  let message: MessageRef | undefined = extra.message;
  const announce = !message && deliveryOf(command.kind) === 'channel' && ctx.step?.quiet !== true;
  const { text, blocks } = renderJobMessage({
    phase: 'queued',
    request: describeCommand(command),
    userId: ctx.userId,
    startedAt: ctx.requestedAt,
    now: ctx.requestedAt,
    jobId,
  });
  const hold = announce && extra.deferPosts === true;
  if (announce && !hold) {
    try {
      message = await deps.ports.post(ctx.channelId, { text, blocks });
    } catch (err) {
      // Not in the channel, or Slack hiccuped: the job posts its own message when it starts.
      deps.log.warn({ err, jobId }, 'could not post the queued message');
    }
  }

  let added = false;
  let holdEndsAt = 0;
  let held: Job | undefined;
  try {
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
    if (message) await withDeadline(deps.store.setJobMessage(jobId, message), 1_500, 'Redis');
    if (extra.gate && !extra.gate.begin()) throw new GaveUpError();
    added = true;
    // Held back (delayed) while its "Queued" message is posted after the acknowledgement, and on a
    // replicated Redis until it is known to be on a replica, so no worker runs a job that could still
    // be taken back. A lost release only delays it: it runs when the hold ends.
    const delay = hold ? ANNOUNCE_HOLD_MS : deps.replicated ? REPLICATION_HOLD_MS : undefined;
    holdEndsAt = Date.now() + ANNOUNCE_HOLD_MS;
    const job = await withDeadline(
      deps.queue.add(command.kind, data, { jobId, ...(delay !== undefined ? { delay } : {}) }),
      1_500,
      'the queue',
    ).catch((err: unknown) => {
      // Refused before it was written (no connection): nothing reached Redis, so nothing can run.
      if (neverSent(err)) {
        added = false;
        extra.gate?.refused();
      }
      throw err;
    });
    held = job;
    if (deps.replicated) {
      await withDeadline(deps.replicated(), 1_500, 'the Redis replicas');
      // A held job is released once its message is up (announceHeld).
      if (!hold) {
        await withDeadline(job.promote(), 1_500, 'the queue').catch((err: unknown) =>
          deps.log.warn({ err, jobId }, `could not release a job at once; it runs within ${delay} ms`),
        );
      }
    }
  } catch (err) {
    // A message the job did not post (the requester's, of an approved request) is not taken back.
    const removed = await undoAccepted(deps, jobId, extra.message ? undefined : message, added);
    // The add was sent (its answer may be what got lost) and the job could not be taken back: it may
    // run after a failover. The person must hear that, not "nothing was started". Only the add's own
    // refusal proves it never reached Redis, not a later step's (the replica wait, the release).
    if (added && !removed) throw new MaybeQueuedError(jobId, err);
    throw err;
  }
  const auditId = accepted.auditId ? { auditId: accepted.auditId } : {};
  if (!hold) return { status: 'queued', jobId, ...auditId, ...(message ? { message } : {}) };
  return {
    status: 'queued',
    jobId,
    ...auditId,
    followUp: () => announceHeld(deps, held!, ctx.channelId, { text, blocks }, holdEndsAt),
  };
}

/**
 * After the acknowledgement: posts the held job's "Queued" message, which the job then edits, and
 * releases the job. A post that fails leaves the job to post its own message (a 429) or to answer
 * privately (a conversation the bot cannot post to); the requester is told which.
 *
 * The message's reference and the release go to Redis after the post, and Redis may be failing over
 * just then (the acknowledgement was given before it died). Both are tried again until shortly before
 * the hold ends, when the job starts anyway; a reference that never got stored by then would leave
 * the job to post a second message and this one showing "Queued" for ever, so this one is removed.
 */
async function announceHeld(
  deps: EnqueueDeps,
  job: Job,
  channel: string,
  content: ChatMessage,
  holdEndsAt: number,
): Promise<string | undefined> {
  const jobId = job.id!;
  let problem: string | undefined;
  let message: MessageRef | undefined;
  try {
    message = await deps.ports.post(channel, content);
  } catch (err) {
    problem = slackCode(err);
    deps.log.warn({ err, jobId }, 'could not post the queued message');
  }
  // Past this the job may be starting on its own: a reference stored later could come too late.
  const lastTry = holdEndsAt - HOLD_END_MARGIN_MS;
  let kept = message === undefined;
  for (;;) {
    try {
      if (!kept) {
        await withDeadline(deps.store.setJobMessage(jobId, message!), 1_500, 'Redis');
        kept = true;
      }
      // One script, on the job as added: a job no longer delayed (its hold ended, it was taken back)
      // is left as it is.
      await withDeadline(job.promote(), 1_500, 'the queue').catch((err: unknown) => {
        if (!NOT_HELD.test(String((err as Error | undefined)?.message))) throw err;
      });
      break;
    } catch (err) {
      if (Date.now() + ANNOUNCE_RETRY_MS > lastTry) {
        // It starts when its hold ends instead.
        deps.log.warn({ err, jobId }, 'could not release a held job');
        break;
      }
      await sleep(ANNOUNCE_RETRY_MS);
    }
  }
  if (message && !kept) {
    deps.log.warn({ jobId }, 'could not store where the queued message is; the job posts its own');
    await deps.ports
      .remove(message)
      .catch((err: unknown) => deps.log.warn({ err, jobId }, 'could not remove the queued message'));
  }
  return problem ? postProblemNotice(problem, `Your request is queued as job ${jobId}.`) : undefined;
}

/** BullMQ's answer to a promote of a job that is gone or no longer delayed. */
const NOT_HELD = /^Missing key for job |is not in the delayed state/;

/** How long before its hold ends a held job's message reference is last tried (clocks may differ a little). */
const HOLD_END_MARGIN_MS = 2_000;
/** Between tries to store a held job's message reference and release it, while Redis fails over. */
const ANNOUNCE_RETRY_MS = 250;

/** How long a job waits, at most, to be released once it is known to be on a replica. */
const REPLICATION_HOLD_MS = 10_000;

/** What a request's record (and audit trail) says when the queue could not take its job. */
export const NOT_STARTED = 'Not started: the queue was unreachable.';

/**
 * Redis failed half-way: take back the job, the "Queued" message and the job record, so nothing says
 * it started. True when the job is known to be gone from the queue.
 */
async function undoAccepted(
  deps: EnqueueDeps,
  jobId: string,
  message: MessageRef | undefined,
  addSent: boolean,
): Promise<boolean> {
  const undo: Promise<unknown>[] = [
    // Added but not on a replica: it must not run after the person was told it did not happen.
    // BullMQ answers 0 when it could not remove it (a worker holds it already).
    // On a replicated Redis the removal counts only once a replica has it too, as the add did.
    addSent
      ? withDeadline(deps.queue.remove(jobId), 500, 'the queue').then(async (n) => {
          if (n !== 1) throw new Error(`job ${jobId} could not be taken back (a worker may hold it)`);
          if (deps.replicated) await withDeadline(deps.replicated(), 1_000, 'the Redis replicas');
        })
      : Promise.resolve(),
    withDeadline(deps.store.updateJob(jobId, { state: 'failed', detail: NOT_STARTED }), 500, 'Redis'),
  ];
  if (message) undo.push(deps.ports.remove(message));
  const results = await Promise.allSettled(undo);
  for (const result of results) {
    if (result.status === 'rejected')
      deps.log.warn({ err: result.reason, jobId }, 'could not undo a request');
  }
  return results[0]!.status === 'fulfilled';
}
