import type { KnownBlock } from '@slack/types';

// What a job's attempt ends with, and the sentences it tells the requester on the way (job-run.ts).

/** What a handler ends with: a line on the outcome and, optionally, blocks that show the result. */
export interface Outcome {
  readonly detail: string;
  readonly result?: readonly KnownBlock[];
  /** The outcome as data, for the outputs of a Workflow Builder step (src/commands/workflow/). */
  readonly outputs?: Readonly<Record<string, unknown>>;
}

/** What the requester is told, within seconds, when the cloud does not answer and a retry is coming. */
export function cloudWaitText(attemptNote?: string): string {
  return `The cloud API did not answer: retrying in the background${attemptNote ? ` (${attemptNote})` : ''}, I will update this message.`;
}

/** What the requester is told when the bot cannot post where they asked. */
export function blockedNote(channelId: string, code: string | undefined): string {
  return code === 'is_archived'
    ? `:warning: <#${channelId}> is archived, so I answer you here instead.`
    : `:warning: I cannot post in <#${channelId}> (Slack said "${code}"): invite @gpuops there, or use a public channel. I answer you here instead.`;
}
