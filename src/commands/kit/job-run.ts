import type { KnownBlock } from '@slack/types';
import type { Job } from 'bullmq';
import { type JobData, usableResponseUrl } from '../../jobs/job-data.js';
import type { MessageRef } from '../../jobs/message-ref.js';
import { type JobPhase, renderJobMessage } from '../../render/job-message.js';
import type { JobChange, JobRecord, RecordedAnswer } from '../../store/store.js';
import type { CommandJobData } from '../job-payload.js';
import { deliveryOf, describeCommand } from '../registry.js';
import type { Delivery } from '../spec.js';
import { DEFAULT_TIMING, type HandlerDeps, type WorkerTiming } from './handler-deps.js';
import { PermanentJobError } from './job-errors.js';
import { blockedNote, cloudWaitText, type Outcome } from './job-texts.js';
import type { ReplyTarget } from './reply-port.js';
import { cannotPostHere, classifySlackFailure } from './slack-failure.js';

export { blockedNote, cloudWaitText, type Outcome };

/** Job progress key: the requester was told the cloud did not answer (one notice per request). */
const CLOUD_WAIT_TOLD = 'cloudWaitTold';

/**
 * One attempt of one job, as handlers see it: the deps, the project, and the one message the request
 * shows, which every call here edits in place.
 */
export class JobRun<D extends HandlerDeps = HandlerDeps> {
  readonly delivery: Delivery;
  readonly request: string;
  readonly timing: WorkerTiming;
  private message: MessageRef | undefined;
  private toldCloudWaitNow = false;
  /** Slack's answer when the request's channel refuses the bot (this attempt); the answers go privately. */
  private blockedBy: string | undefined;
  private toldBlocked = false;
  /** The notice on its way: later messages wait for it, so it never lands over the final answer. */
  private noticeSent: Promise<void> = Promise.resolve();
  /** Until when progress edits wait (timing.progressQuietMs), and the latest one waiting. */
  private readonly quietUntil: number;
  private pending: { phase: JobPhase; detail?: string; result?: readonly KnownBlock[] } | undefined;
  private pendingTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    readonly job: Job<JobData>,
    readonly data: CommandJobData,
    readonly deps: D,
    readonly signal: AbortSignal,
    /** The job's record as the worker read it before the attempt: its states are written without a read. */
    private record?: JobRecord,
    /** The request's message when the job data does not carry it (read before the attempt acts). */
    message?: MessageRef,
  ) {
    this.delivery = deliveryOf(data.command.kind);
    this.request = describeCommand(data.command);
    this.timing = { ...DEFAULT_TIMING, ...deps.timing };
    this.message = data.message ?? message;
    // A retry's progress (which attempt, what failed) is news at once.
    this.quietUntil = job.attemptsMade === 0 ? this.now() + this.timing.progressQuietMs : 0;
  }

  now(): number {
    return (this.deps.now ?? Date.now)();
  }

  /** The project of the request; a command that needs one and has none fails with what to do. */
  get projectId(): string {
    const id = this.data.ctx.projectId ?? this.deps.defaultProjectId;
    if (!id) {
      throw new PermanentJobError(
        'This channel has no project yet: run `/gpu project use <name|id>` here, or set CLOUD_PROJECT_ID.',
      );
    }
    return id;
  }

  /** Call options for the cloud client: this job's project and cancellation. */
  get call(): { projectId: string; signal: AbortSignal } {
    return { projectId: this.projectId, signal: this.signal };
  }

  progress<T extends Record<string, unknown>>(): Partial<T> {
    return (this.data.progress ?? {}) as Partial<T>;
  }

  /** The request's response_url while Slack still takes answers on it (30 minutes), else undefined. */
  private get responseUrl(): string | undefined {
    return usableResponseUrl(this.data.ctx, Date.now());
  }

  /**
   * Drops the response_url from the job's data, where BullMQ keeps it for days after the job: `always`
   * once the job has answered, else only when it can no longer be used.
   */
  async forgetResponseUrl(always: boolean): Promise<void> {
    if (this.data.ctx.responseUrl === undefined || (!always && this.responseUrl !== undefined)) return;
    const { responseUrl: _, ...ctx } = this.data.ctx;
    const next: CommandJobData = { ...this.data, ctx };
    await this.job.updateData(next);
    (this as { data: CommandJobData }).data = next;
  }

  /** Records a step so a retry after a crash resumes after it instead of doing it twice. */
  async saveProgress(patch: Record<string, unknown>): Promise<void> {
    const next: CommandJobData = { ...this.data, progress: { ...this.data.progress, ...patch } };
    await this.job.updateData(next);
    (this as { data: CommandJobData }).data = next;
  }

  /**
   * Private answers (ephemeral and DM deliveries) show only the end, and the cloud-wait notice;
   * nothing of theirs reaches the channel.
   */
  private get answersPrivately(): boolean {
    return this.delivery === 'ephemeral' || this.delivery === 'dm';
  }

  /** A workflow step with no channel to show it in: its outputs are the answer, nothing is posted. */
  private get quiet(): boolean {
    return this.data.ctx.step?.quiet === true;
  }

  /** Whether the requester was told the cloud did not answer, by this attempt or an earlier one. */
  get toldCloudWait(): boolean {
    return this.toldCloudWaitNow || this.data.progress?.[CLOUD_WAIT_TOLD] === true;
  }

  /**
   * Tells the requester, once per request, that the cloud did not answer and the job retries in the
   * background: the channel message is edited, a private answer replaced through its response_url
   * (without one there is no message to update later, so nothing is said). `again` edits a channel
   * message once more, e.g. with the next attempt's number. Never throws; the next
   * update or the final answer goes out after it.
   */
  noticeCloudWait(options: { readonly attemptNote?: string; readonly again?: boolean } = {}): Promise<void> {
    // A channel message may be edited again (with the attempt); a response_url takes only a few uses.
    if (this.toldCloudWait && !(options.again && !this.answersPrivately)) return this.noticeSent;
    this.toldCloudWaitNow = true;
    this.dropProgress();
    const detail = cloudWaitText(options.attemptNote);
    const previous = this.noticeSent;
    this.noticeSent = (async () => {
      await previous;
      try {
        if (!this.answersPrivately) {
          await this.recordState({ state: 'working', detail });
          await this.show('working', this.rendered('working', detail));
          return;
        }
        if (!this.responseUrl) return;
        await this.deps.reply.privately(this.replyTarget(), this.rendered('working', detail), {
          replace: true,
        });
      } catch (err) {
        this.deps.log.warn(
          { jobId: this.job.id, err },
          'could not tell the requester the cloud did not answer',
        );
      }
    })();
    return this.noticeSent;
  }

  /**
   * Keeps the notice told across attempts. Only between attempts (the handler has returned): a write
   * of the job's data while the handler saves its own progress could lose a step.
   */
  async rememberCloudWait(): Promise<void> {
    if (!this.toldCloudWaitNow || this.data.progress?.[CLOUD_WAIT_TOLD] === true) return;
    await this.noticeSent;
    await this.saveProgress({ [CLOUD_WAIT_TOLD]: true });
  }

  /**
   * Where the job stands: in its record (`/gpu jobs`) and in the channel message (channel deliveries;
   * private answers only show the end). Within the quiet period both wait, so a job that ends sooner
   * goes from "queued" straight to its answer, in the message and the record alike.
   */
  async update(phase: JobPhase, detail?: string, result?: readonly KnownBlock[]): Promise<void> {
    await this.noticeSent;
    if (this.now() < this.quietUntil) {
      this.defer({ phase, ...(detail !== undefined ? { detail } : {}), ...(result ? { result } : {}) });
      return;
    }
    await this.showProgress(phase, detail, result);
  }

  private async showProgress(
    phase: JobPhase,
    detail?: string,
    result?: readonly KnownBlock[],
  ): Promise<void> {
    await this.recordState({ state: phase, ...(detail ? { detail } : {}) });
    if (this.answersPrivately) return;
    await this.show(phase, this.rendered(phase, detail, result));
  }

  private async recordState(change: JobChange & { state: JobPhase }): Promise<void> {
    if (!this.record) {
      await this.deps.store.updateJob(this.job.id!, change);
      return;
    }
    this.record = await this.deps.store.updateHeldJob(this.record, change);
  }

  /** Shows the progress edit still waiting for the quiet period, now (an attempt ending in a retry). */
  async flushProgress(): Promise<void> {
    if (this.pendingTimer) clearTimeout(this.pendingTimer);
    this.pendingTimer = undefined;
    this.noticeSent = this.noticeSent.then(() => this.showPending());
    await this.noticeSent;
  }

  /** Keeps the latest progress edit until the quiet period ends; the answer, if sooner, replaces it. */
  private defer(progress: NonNullable<JobRun['pending']>): void {
    this.pending = progress;
    if (this.pendingTimer) return;
    this.pendingTimer = setTimeout(
      () => {
        this.pendingTimer = undefined;
        this.noticeSent = this.noticeSent.then(() => this.showPending());
      },
      Math.max(0, this.quietUntil - this.now()),
    );
  }

  private async showPending(): Promise<void> {
    const progress = this.pending;
    this.pending = undefined;
    // A cancelled attempt (the worker is closing) leaves the message to the attempt that takes over.
    if (!progress || this.signal.aborted) return;
    // Runs from a timer, awaited by no one until the next update: a progress state that cannot be
    // recorded (Redis away) is logged, never a rejection left unhandled. The final state is recorded
    // by finish(), which does throw.
    await this.showProgress(progress.phase, progress.detail, progress.result).catch((err: unknown) =>
      this.deps.log.warn(
        { jobId: this.job.id, phase: progress.phase, err },
        'could not record a job’s progress',
      ),
    );
  }

  private dropProgress(): void {
    if (this.pendingTimer) clearTimeout(this.pendingTimer);
    this.pendingTimer = undefined;
    this.pending = undefined;
  }

  /**
   * The final answer. DM deliveries send their content to the DM themselves; their answer here says so,
   * to the requester alone, in place of the listener's note.
   */
  async finish(phase: 'done' | 'failed', outcome: Outcome): Promise<void> {
    this.dropProgress();
    await this.noticeSent;
    // Recorded before it is shown, as it will be shown, so that no later attempt acts again and one
    // that finds it not marked shown (the process died in between) shows the very same answer (reshow).
    const answer = this.quiet ? undefined : this.answerOf(phase, outcome);
    await this.recordState({
      state: phase,
      detail: outcome.detail,
      ...(answer ? { answer } : {}),
      ...(outcome.outputs ? { outputs: outcome.outputs } : {}),
    });
    await this.showAnswer(phase, outcome.detail, answer);
  }

  /**
   * Shows again a final answer recorded by an attempt that died before marking it shown: the same
   * message edited to the same content (or the response_url's answer replaced by the same), so the
   * requester sees one answer, whole. A record from before answers were recorded has its sentence.
   */
  async reshow(record: JobRecord & { readonly state: 'done' | 'failed' }): Promise<void> {
    if (!record.answer) {
      await this.finish(record.state, { detail: record.detail ?? '' });
      return;
    }
    await this.showAnswer(record.state, record.detail ?? '', record.answer);
  }

  private answerOf(phase: 'done' | 'failed', outcome: Outcome): RecordedAnswer {
    if (!this.answersPrivately) return this.rendered(phase, outcome.detail, outcome.result);
    const { text, blocks } =
      phase === 'done' && outcome.result
        ? { text: outcome.detail, blocks: [...outcome.result] }
        : this.rendered(phase, outcome.detail, outcome.result);
    return { text, blocks, private: true };
  }

  private async showAnswer(
    phase: 'done' | 'failed',
    detail: string,
    answer: RecordedAnswer | undefined,
  ): Promise<void> {
    const content = answer && { text: answer.text, blocks: answer.blocks as KnownBlock[] };
    if (!content) {
      // A workflow step with no channel: its outputs are its answer, nothing is shown.
    } else if (answer.private) {
      // The response_url while Slack takes answers on it, else an ephemeral where they asked, else a DM.
      await this.deps.reply.privately(this.replyTarget(), content, { replace: true });
    } else {
      await this.show(phase, content);
    }
    await this.recordState({ state: phase, detail, answered: true }).catch((err: unknown) =>
      // Shown all the same; an attempt run again after this one shows the same answer again.
      this.deps.log.warn({ jobId: this.job.id, err }, 'could not record that the answer was shown'),
    );
  }

  /** Records that the job's workflow step was completed at Slack, so that no later attempt does it again. */
  async recordStepDone(): Promise<void> {
    const current = this.record ?? (await this.deps.store.job(this.job.id!));
    if (current?.state !== 'done' && current?.state !== 'failed') return;
    await this.recordState({
      state: current.state,
      ...(current.answered ? { answered: true as const } : {}),
      stepDone: true,
    });
  }

  private rendered(phase: JobPhase, detail?: string, result?: readonly KnownBlock[]) {
    return renderJobMessage({
      phase,
      request: this.request,
      userId: this.data.ctx.userId,
      ...(detail !== undefined ? { detail } : {}),
      ...(result ? { result } : {}),
      startedAt: this.data.ctx.requestedAt,
      now: this.now(),
      jobId: this.job.id!,
    });
  }

  /**
   * Shows the request's state where the requester can see it, best-effort: a Slack failure is logged,
   * never the job's outcome (the cloud may already have done the work). Where the bot cannot post
   * (not in a private channel, a DM between people, archived), the first notice and the end go to the
   * requester privately instead: the response_url, else a DM.
   */
  private async show(phase: JobPhase, content: { text: string; blocks: KnownBlock[] }): Promise<void> {
    if (this.quiet) return;
    if (this.blockedBy === undefined) {
      try {
        await this.showInChannel(content);
        return;
      } catch (err) {
        if (!cannotPostHere(err)) {
          this.deps.log.warn({ jobId: this.job.id, phase, err }, 'could not show a job’s progress in Slack');
          return;
        }
        this.blockedBy = (err as { data?: { error?: string } }).data?.error ?? 'not_in_channel';
      }
    }
    const final = phase === 'done' || phase === 'failed';
    if (this.toldBlocked && !final) return;
    this.toldBlocked = true;
    const { text, blocks } = content;
    const note = blockedNote(this.data.ctx.channelId, this.blockedBy);
    await this.answerElsewhere({
      text: `${note}\n${text}`,
      blocks: [{ type: 'section', text: { type: 'mrkdwn', text: note } }, ...blocks],
    });
  }

  /** Where the requester's private answers go, and the ways there their request left (reply-port.ts). */
  private replyTarget(): ReplyTarget {
    const { userId, channelId, requestedAt } = this.data.ctx;
    return { userId, channelId, responseUrl: this.responseUrl, issuedAt: requestedAt };
  }

  /** The requester's private fallback where the bot cannot post: their response_url while it lives, else a DM. */
  private async answerElsewhere(content: { text: string; blocks: KnownBlock[] }): Promise<void> {
    const { channelId: _blocked, ...target } = this.replyTarget();
    try {
      await this.deps.reply.privately(target, content);
    } catch (err) {
      this.deps.log.warn({ jobId: this.job.id, err }, 'could not reach the requester in Slack at all');
    }
  }

  private async showInChannel({ text, blocks }: { text: string; blocks: KnownBlock[] }): Promise<void> {
    const ref = this.message ?? (await this.deps.store.jobMessage(this.job.id!));
    if (ref) {
      try {
        await this.deps.slack.chat.update({ channel: ref.channel, ts: ref.ts, text, blocks });
        return;
      } catch (err) {
        // Someone deleted the request's message: carry on in a new one rather than fail the job.
        if (classifySlackFailure(err).kind !== 'message-gone') throw err;
      }
    }
    // The listener could not post (or crashed first): the job posts the one message itself.
    const channel = this.data.ctx.channelId;
    const posted = await this.deps.slack.chat.postMessage({ channel, text, blocks });
    if (posted.ts) {
      this.message = { channel: posted.channel ?? channel, ts: posted.ts };
      await this.deps.store.setJobMessage(this.job.id!, this.message);
    }
  }
}
