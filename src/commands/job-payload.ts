import { z } from 'zod';
import { type JobData, JobDataError, jobDataSchema, parseJobData } from '../jobs/job-data.js';
import { type GpuCommand, gpuCommandSchema } from './registry.js';

// A request's job payload with its command checked by the command's own schema: on add, and again
// when a worker takes it, because job data outlives deploys.

export type CommandJobData = JobData<GpuCommand>;

export const commandJobDataSchema = jobDataSchema.extend({ command: gpuCommandSchema });

/** The payload of a request's job, or a JobDataError naming what does not match this version. */
export function parseCommandJobData(data: unknown): CommandJobData {
  const loose = parseJobData(data);
  const command = gpuCommandSchema.safeParse(loose.command);
  if (!command.success) throw new JobDataError(z.prettifyError(command.error));
  return { ...loose, command: command.data };
}
