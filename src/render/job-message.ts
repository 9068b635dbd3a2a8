import type { KnownBlock } from '@slack/types';

// The message a request shows in the channel, edited in place as its job moves:
// queued → working → waiting for a state → done or failed, with who asked and how long it took.

export type JobPhase = 'queued' | 'working' | 'waiting' | 'done' | 'failed';

export interface JobMessageInput {
  readonly phase: JobPhase;
  /** The request as typed, e.g. `/gpu start train-1`. */
  readonly request: string;
  readonly userId: string;
  /** One line on where things stand or how they ended. */
  readonly detail?: string;
  /** Extra blocks for the result (fields of an instance, a list…), shown under the status line. */
  readonly result?: readonly KnownBlock[];
  readonly startedAt: number;
  readonly now: number;
  readonly jobId?: string;
}

const ICON: Record<JobPhase, string> = {
  queued: ':hourglass_flowing_sand:',
  working: ':gear:',
  waiting: ':hourglass:',
  done: ':white_check_mark:',
  failed: ':x:',
};
const LABEL: Record<JobPhase, string> = {
  queued: 'Queued',
  working: 'Working',
  waiting: 'Waiting',
  done: 'Done',
  failed: 'Failed',
};

/** Slack escapes for text we did not write ourselves. */
export function escapeText(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

export function formatElapsed(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}

/** Cuts text to Slack's limit for a section, saying so rather than failing the whole message. */
export function clip(text: string, max = 2900): string {
  return text.length <= max ? text : `${text.slice(0, max - 20)}… _(cut: too long)_`;
}

export function renderJobMessage(input: JobMessageInput): { text: string; blocks: KnownBlock[] } {
  const head = `${ICON[input.phase]} *${LABEL[input.phase]}* · \`${escapeText(input.request)}\``;
  const detail = input.detail ? `\n${escapeText(input.detail)}` : '';
  const context = [
    `requested by <@${input.userId}>`,
    `${formatElapsed(input.now - input.startedAt)} elapsed`,
    ...(input.jobId ? [`job ${input.jobId}`] : []),
  ].join(' · ');
  const blocks: KnownBlock[] = [
    { type: 'section', text: { type: 'mrkdwn', text: clip(`${head}${detail}`) } },
    ...(input.result ?? []),
    { type: 'context', elements: [{ type: 'mrkdwn', text: context }] },
  ];
  const text = `${LABEL[input.phase]}: ${input.request}${input.detail ? ` — ${input.detail}` : ''}`;
  return { text: clip(text, 3000), blocks: blocks.slice(0, 50) };
}
