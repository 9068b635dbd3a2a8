import { z } from 'zod';
import { messageRefSchema } from './message-ref.js';

// What a job carries. Validated when added and again when processed, because job data outlives deploys.
// Never a secret: tokens stay in the environment, user data and kubeconfigs never enter a job.

/**
 * A Workflow Builder step this request runs for (docs/workflows.md): the job completes or fails it
 * when it ends. Only ids: the event's bot_access_token never enters a job; the bot's own token
 * completes the step.
 */
export const stepRefSchema = z.object({
  /** Slack's function_execution_id. */
  executionId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
  /** Slack's workflow_execution_id: the run of the whole workflow this step is part of. */
  workflowExecutionId: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/)
    .optional(),
  /** The step's callback_id (src/commands/workflow/steps.ts). */
  callbackId: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/),
  /** No channel was given (or the answer is private): the step's outputs are the only answer. */
  quiet: z.boolean(),
  /** The few inputs the outputs depend on (never a secret), e.g. the type a capacity step asks about. */
  kept: z.record(z.string().max(64), z.union([z.string().max(200), z.number(), z.boolean()])).optional(),
});
export type StepRef = z.infer<typeof stepRefSchema>;

/** What the audit trail keeps of the step a request came from: which step, and which runs of it. */
export function stepAuditParameters(step: StepRef | undefined): Record<string, string> {
  if (step === undefined) return {};
  return {
    step: step.callbackId,
    functionExecutionId: step.executionId,
    ...(step.workflowExecutionId !== undefined ? { workflowExecutionId: step.workflowExecutionId } : {}),
  };
}

export const jobContextSchema = z.object({
  teamId: z.string().min(1),
  channelId: z.string().min(1),
  userId: z.string().min(1),
  userName: z.string().optional(),
  /**
   * The channel whose message the person typed or clicked in, from Slack's signed payload (never a
   * channel a button carries): the only channel whose role grants count for this request. Absent for
   * the Home tab, workflow steps and schedule firings, where the person's own roles decide.
   */
  madeIn: z.string().min(1).optional(),
  /** The project the command runs in: the channel's binding or CLOUD_PROJECT_ID. */
  projectId: z.uuid().optional(),
  /** Slack's response_url, for answering read-only commands ephemerally and in place. */
  responseUrl: z.url().optional(),
  requestedAt: z.number().int().positive(),
  /** Set when a Workflow Builder step made the request. */
  step: stepRefSchema.optional(),
  /** Set when a power schedule's firing made the request: the schedule's id (docs/schedules.md). */
  schedule: z.string().min(1).max(40).optional(),
});
export type JobContext = z.infer<typeof jobContextSchema>;

/**
 * Slack's response_url takes answers for 30 minutes after the request it came with (`requestedAt`).
 * It is a bearer capability for that long: after it nothing uses it, and a job drops it from its data
 * (processCommandJob), which BullMQ keeps for up to 14 days.
 */
export const RESPONSE_URL_LIFETIME_MS = 30 * 60_000;

/** The context's response_url while Slack still takes answers on it, else undefined. */
export function usableResponseUrl(ctx: JobContext, now: number): string | undefined {
  return ctx.responseUrl !== undefined && now - ctx.requestedAt < RESPONSE_URL_LIFETIME_MS
    ? ctx.responseUrl
    : undefined;
}

/** A secret sealed in Redis (src/store/sealed.ts): the job carries this reference, never the text. */
export const sealedRefSchema = z.object({ sealedRef: z.string().regex(/^[A-Za-z0-9_-]{24}$/) });
export type SealedRefData = z.infer<typeof sealedRefSchema>;

/** Secrets a request typed into a form, by what they are for. */
export const sealedInputsSchema = z.object({
  /** cloud-init user data (already base64-encoded) for `create`. */
  userData: sealedRefSchema.optional(),
  /** The kubeconfig of `k8s register`. */
  kubeconfig: sealedRefSchema.optional(),
});
export type SealedInputs = z.infer<typeof sealedInputsSchema>;

export const leaseTermsSchema = z.object({
  seconds: z.number().int().positive(),
  remindBeforeSeconds: z.number().int().min(0),
  /** The machine's cost in words, for the reminder: `$23.12/h · $554.88/day`. */
  cost: z.string().max(200).optional(),
});
export type LeaseTerms = z.infer<typeof leaseTermsSchema>;

/**
 * The command a job carries, as far as the queue knows it: a kind and its fields. Every command's own
 * schema lives with its spec; src/commands/job-payload.ts checks the whole payload with it.
 */
export const queuedCommandSchema = z.looseObject({ kind: z.string().min(1).max(40) });
export type QueuedCommand = z.infer<typeof queuedCommandSchema>;

export const jobDataSchema = z.object({
  v: z.literal(1),
  command: queuedCommandSchema,
  ctx: jobContextSchema,
  /** The channel message this job edits in place as it moves (state-changing commands). */
  message: messageRefSchema.optional(),
  /** Set when an approver let the job through (guardrails). */
  approvalId: z.string().optional(),
  /** Progress a retried job resumes from instead of doing a step twice. */
  progress: z.record(z.string(), z.unknown()).optional(),
  /** References to secrets sealed in Redis, for requests made through a form. */
  sealed: sealedInputsSchema.optional(),
  /** The stop time a costly machine gets once running (policy approvals.lease; src/store/leases.ts). */
  lease: leaseTermsSchema.optional(),
});
/** A job's data; `C` is the command's type once its schema has checked it. */
export type JobData<C extends QueuedCommand = QueuedCommand> = Omit<
  z.infer<typeof jobDataSchema>,
  'command'
> & {
  readonly command: C;
};

export class JobDataError extends Error {
  constructor(readonly problems: string) {
    super(`The job's data does not match what this version expects: ${problems}`);
    this.name = 'JobDataError';
  }
}

export function parseJobData(data: unknown): JobData {
  const result = jobDataSchema.safeParse(data);
  if (!result.success) throw new JobDataError(z.prettifyError(result.error));
  return result.data;
}

// System jobs: work the bot schedules for itself (no person asked, so no command and no channel).
// A second schema on the same queue, told apart by its `system` field.

export const catalogRefreshDataSchema = z.object({
  v: z.literal(1),
  system: z.literal('catalog.refresh'),
  /** The project whose catalogue to refresh; CLOUD_PROJECT_ID when absent. */
  projectId: z.uuid().optional(),
  /** A form waiting for the data: updated in place (views.update) once the catalogue is written. */
  view: z
    .object({
      id: z.string().min(1).max(64),
      hash: z.string().min(1).max(128).optional(),
      /** The form's private_metadata (channel, project, cluster: never a secret). */
      metadata: z.string().max(3000),
    })
    .optional(),
});
export type CatalogRefreshData = z.infer<typeof catalogRefreshDataSchema>;

/** Closes approval requests whose time is up (a job scheduler, src/jobs/guardrail-jobs.ts). */
export const approvalsExpireDataSchema = z.object({
  v: z.literal(1),
  system: z.literal('approvals.expire'),
});

/** Drives every request stuck between two states one step on (the sweeper, src/requests/drive-approved.ts). */
export const requestsSweepDataSchema = z.object({
  v: z.literal(1),
  system: z.literal('requests.sweep'),
});

/** A lease's reminder or stop, made for one stop time: a no-op once the lease was extended. */
const leaseJob = <S extends 'lease.remind' | 'lease.stop'>(system: S) =>
  z.object({
    v: z.literal(1),
    system: z.literal(system),
    leaseId: z.string().min(1),
    stopAt: z.number().int().positive(),
  });
export const leaseRemindDataSchema = leaseJob('lease.remind');
export const leaseStopDataSchema = leaseJob('lease.stop');
export type LeaseJobData = z.infer<typeof leaseRemindDataSchema> | z.infer<typeof leaseStopDataSchema>;

export const systemJobDataSchema = z.discriminatedUnion('system', [
  catalogRefreshDataSchema,
  approvalsExpireDataSchema,
  requestsSweepDataSchema,
  leaseRemindDataSchema,
  leaseStopDataSchema,
]);
export type SystemJobData = z.infer<typeof systemJobDataSchema>;
export type SystemJobName = SystemJobData['system'];

/** True for a system job's data (it names a `system` job instead of carrying a command). */
export function isSystemJobData(data: unknown): boolean {
  return typeof data === 'object' && data !== null && 'system' in data;
}

export function parseSystemJobData(data: unknown): SystemJobData {
  const result = systemJobDataSchema.safeParse(data);
  if (!result.success) throw new JobDataError(z.prettifyError(result.error));
  return result.data;
}
