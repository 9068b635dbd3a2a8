import {
  CloudApiError,
  CloudNetworkError,
  CloudSchemaError,
  CloudTimeoutError,
  CloudUnsupportedError,
} from '../../cloud/index.js';
import { inWords, operationPhrase } from '../../cloud/operation-words.js';
import { AppError, ValidationError } from '../../errors.js';
import { JobDataError } from '../../jobs/job-data.js';
import { classifySlackFailure } from './slack-failure.js';

/** A failure no retry can fix (bad input, a 4xx, a missing resource): the job ends at once. */
export class PermanentJobError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentJobError';
  }
}

export interface Classified {
  readonly permanent: boolean;
  /** One sentence for people: what failed, why, what to do. No stack, no token, no raw JSON. */
  readonly message: string;
}

/** Decides whether a failure is worth another attempt, and what the requester is told. */
export function classifyFailure(err: unknown): Classified {
  if (err instanceof PermanentJobError) return { permanent: true, message: err.message };
  if (err instanceof JobDataError) {
    return {
      permanent: true,
      message: 'This request was queued by another version of gpuops; please send it again.',
    };
  }
  if (err instanceof ValidationError) return { permanent: true, message: err.message };
  // Cloud errors name the operation first; people read it in words (operation-words.ts).
  if (err instanceof CloudUnsupportedError) {
    const what = operationPhrase(err.operation) ?? 'do this';
    return {
      permanent: true,
      message: `This cloud's API cannot ${what}. Use the cloud's own console or CLI for it; \`/gpu help\` lists what works here.`,
    };
  }
  if (err instanceof CloudApiError) {
    const transient = err.status === 408 || err.status === 429 || (err.status >= 500 && err.status !== 501);
    return { permanent: !transient, message: inWords(err.message) };
  }
  if (err instanceof CloudNetworkError || err instanceof CloudTimeoutError) {
    return { permanent: false, message: inWords(err.message) };
  }
  // The cloud answered something we cannot read: retrying will not change it.
  if (err instanceof CloudSchemaError) return { permanent: true, message: inWords(err.message) };
  if (err instanceof AppError) return { permanent: false, message: err.message };
  // Slack Web API errors: one that retrying cannot change (not in the channel, no such user, missing
  // scope…) ends the job at once instead of six attempts over half a minute.
  const slack = classifySlackFailure(err);
  if (slack.kind === 'permanent' || slack.kind === 'message-gone') {
    return {
      permanent: true,
      message: `Slack refused the answer ("${slack.code}"); check that gpuops is in this channel and has its scopes.`,
    };
  }
  const code = (err as { data?: { error?: string } } | undefined)?.data?.error;
  return {
    permanent: false,
    message: code ? `Slack answered "${code}".` : 'Something unexpected went wrong; it was logged.',
  };
}
