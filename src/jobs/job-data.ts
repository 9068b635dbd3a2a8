import { z } from 'zod';
import { type GpuCommand, gpuCommandSchema } from '../command/command-schema.js';

// What a job carries. Validated when added and again when processed, because job data outlives deploys.
// Never a secret: tokens stay in the environment, user data and kubeconfigs never enter a job.

export const jobContextSchema = z.object({
  teamId: z.string().min(1),
  channelId: z.string().min(1),
  userId: z.string().min(1),
  userName: z.string().optional(),
  /** The project the command runs in: the channel's binding or CLOUD_PROJECT_ID. */
  projectId: z.uuid().optional(),
  /** Slack's response_url, for answering read-only commands ephemerally and in place. */
  responseUrl: z.url().optional(),
  requestedAt: z.number().int().positive(),
});
export type JobContext = z.infer<typeof jobContextSchema>;

export const messageRefSchema = z.object({ channel: z.string().min(1), ts: z.string().min(1) });
export type MessageRef = z.infer<typeof messageRefSchema>;

export const jobDataSchema = z.object({
  v: z.literal(1),
  command: gpuCommandSchema,
  ctx: jobContextSchema,
  /** The channel message this job edits in place as it moves (state-changing commands). */
  message: messageRefSchema.optional(),
  /** Set when an approver let the job through (guardrails). */
  approvalId: z.string().optional(),
  /** Progress a retried job resumes from instead of doing a step twice. */
  progress: z.record(z.string(), z.unknown()).optional(),
});
export type JobData = z.infer<typeof jobDataSchema>;

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

export type { GpuCommand };
