// A job's record: what `/gpu jobs` lists, and the state a retried attempt reads before it acts.

export const JOB_STATES = ['queued', 'working', 'waiting', 'done', 'failed'] as const;
export type JobState = (typeof JOB_STATES)[number];

export interface JobRecord {
  readonly id: string;
  readonly kind: string;
  /** What was asked, as the user would type it (no secrets: commands never carry any). */
  readonly summary: string;
  readonly userId: string;
  readonly channelId: string;
  readonly state: JobState;
  readonly detail?: string;
  /**
   * The final answer (done or failed) reached the requester. The final state is recorded before the
   * answer is shown, so that no attempt acts again; this says the showing happened too.
   */
  readonly answered?: true;
  /**
   * The final answer as rendered, recorded with the final state before it is shown and dropped once
   * it is marked answered: an attempt that finds it unmarked shows the very same answer again.
   */
  readonly answer?: RecordedAnswer;
  /** The outcome as data for a Workflow Builder step, recorded with the final state. */
  readonly outputs?: Readonly<Record<string, unknown>>;
  /** The Workflow Builder step this job ran for was completed (or failed) at Slack. */
  readonly stepDone?: true;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** A final answer as it was shown: in the request's message, or privately to the requester. */
export interface RecordedAnswer {
  readonly text: string;
  readonly blocks: readonly unknown[];
  readonly private?: true;
}

/** A job's new state; `answered` only with the final one, once it was shown. */
export interface JobChange {
  readonly state: JobState;
  readonly detail?: string;
  readonly answered?: true;
  readonly answer?: RecordedAnswer;
  readonly outputs?: Readonly<Record<string, unknown>>;
  readonly stepDone?: true;
}

/**
 * The record after a change: a state written without `answered` is not (yet) shown; the rendered
 * answer is kept only until it is (an answer can be a long listing, and records live 14 days).
 */
export function changed(record: JobRecord, change: JobChange): JobRecord {
  const { answered: _shown, answer: recorded, ...rest } = record;
  const answer = change.answered ? undefined : (change.answer ?? recorded);
  return {
    ...rest,
    state: change.state,
    ...(change.detail !== undefined ? { detail: change.detail } : {}),
    ...(change.answered ? { answered: true as const } : {}),
    ...(answer ? { answer } : {}),
    ...(change.outputs ? { outputs: change.outputs } : {}),
    ...(change.stepDone ? { stepDone: true as const } : {}),
    updatedAt: Date.now(),
  };
}
