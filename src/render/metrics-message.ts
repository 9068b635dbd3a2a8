import type { KnownBlock } from '@slack/types';
import { clip, escapeText } from './job-message.js';

// The text twin of a metric chart, as Slack shows it: a code block, so the sparklines and columns line up.

const FENCE = '```';

/** The summary in a code block, cut to fit one section. */
export function summaryMrkdwn(summary: string, max = 2900): string {
  const body = escapeText(summary).replaceAll(FENCE, "'''");
  return `${FENCE}${clip(body, max - FENCE.length * 2)}${FENCE}`;
}

export function summaryBlocks(summary: string, note?: string): KnownBlock[] {
  const blocks: KnownBlock[] = [{ type: 'section', text: { type: 'mrkdwn', text: summaryMrkdwn(summary) } }];
  if (note) blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: clip(note, 2000) }] });
  return blocks;
}

/** A file name Slack and people can read: `metrics-train-1-1h.png`. */
export function chartFileName(subject: string, range: string): string {
  const safe = subject
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
  return `metrics-${safe || 'query'}-${range}.png`;
}
