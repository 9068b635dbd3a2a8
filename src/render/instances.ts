import type { KnownBlock } from '@slack/types';
import type { Instance } from '../cloud/index.js';
import { countNoun } from './count-noun.js';
import { clip, escapeText } from './job-message.js';

// Instances as people read them. userData is never shown: it may hold secrets.

const STATE_ICON: Record<string, string> = {
  running: ':large_green_circle:',
  stopped: ':white_circle:',
  creating: ':hourglass_flowing_sand:',
  starting: ':hourglass_flowing_sand:',
  stopping: ':hourglass_flowing_sand:',
  deleting: ':wastebasket:',
  error: ':red_circle:',
  'out-of-stock': ':red_circle:',
};

export function stateIcon(state: string): string {
  return STATE_ICON[state] ?? ':grey_question:';
}

/** One line per instance. */
export function instanceLine(i: Instance): string {
  const ip = i.ip ? ` · ${i.ip}` : '';
  const flags = [i.preemptible ? 'preemptible' : '', i.ephemeral ? 'ephemeral' : '']
    .filter(Boolean)
    .join(', ');
  return `${stateIcon(i.state)} *${escapeText(i.name)}* · ${escapeText(i.type)} · ${escapeText(i.state)}${ip}${flags ? ` · ${flags}` : ''}`;
}

export const PAGE_SIZE = 20;

/** The buttons under a paged list; each carries the command (without `/gpu`) that shows its page. */
export const PAGE_ACTIONS = { previous: 'list_page_previous', next: 'list_page_next' } as const;

/**
 * A page of a long list as sections of lines, within Slack's block and character limits. `commandFor`
 * (page number from 1 → the command text that lists that page) adds Previous and Next buttons.
 */
export function listBlocks(
  title: string,
  lines: readonly string[],
  page = 0,
  pageSize = PAGE_SIZE,
  commandFor?: (page: number) => string,
): { text: string; blocks: KnownBlock[]; pages: number } {
  const pages = Math.max(1, Math.ceil(lines.length / pageSize));
  const current = Math.min(Math.max(page, 0), pages - 1);
  const slice = lines.slice(current * pageSize, (current + 1) * pageSize);
  const blocks: KnownBlock[] = [
    { type: 'section', text: { type: 'mrkdwn', text: clip(`*${escapeText(title)}*`) } },
  ];
  // Sections hold at most 3,000 characters: pack lines into as few as fit.
  let chunk = '';
  for (const line of slice) {
    if (chunk.length + line.length + 1 > 2900) {
      blocks.push({ type: 'section', text: { type: 'mrkdwn', text: chunk } });
      chunk = '';
    }
    chunk += `${chunk ? '\n' : ''}${clip(line, 2900)}`;
  }
  if (chunk) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: chunk } });
  if (lines.length === 0)
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: '_Nothing here yet._' } });
  // A page past the end shows the last one, and says so rather than pretending it was asked for.
  if (page > pages - 1) {
    blocks.push({
      type: 'context',
      elements: [
        {
          type: 'mrkdwn',
          text: `There is no page ${page + 1}: the list has ${countNoun(pages, 'page')}, and this is page ${current + 1}.`,
        },
      ],
    });
  }
  if (pages > 1) {
    blocks.push({
      type: 'context',
      elements: [{ type: 'mrkdwn', text: `Page ${current + 1} of ${pages} · ${lines.length} in all` }],
    });
    if (commandFor) blocks.push(pageButtons(current, pages, commandFor));
  }
  const text = `${title}: ${lines.length} item${lines.length === 1 ? '' : 's'}`;
  return { text, blocks, pages };
}

function pageButtons(current: number, pages: number, commandFor: (page: number) => string): KnownBlock {
  const button = (action: string, label: string, page: number) => ({
    type: 'button' as const,
    action_id: action,
    text: { type: 'plain_text' as const, text: label },
    value: commandFor(page),
  });
  const elements = [
    ...(current > 0 ? [button(PAGE_ACTIONS.previous, `◀ Previous (${current})`, current)] : []),
    ...(current < pages - 1 ? [button(PAGE_ACTIONS.next, `Next (${current + 2}) ▶`, current + 2)] : []),
  ];
  return { type: 'actions', block_id: 'list_pages', elements };
}

export function instanceDetailBlocks(i: Instance): KnownBlock[] {
  const fields = [
    `*State*\n${stateIcon(i.state)} ${escapeText(i.state)}`,
    `*Type*\n${escapeText(i.type)}`,
    `*IP*\n${i.ip ? escapeText(i.ip) : '—'}`,
    `*Image*\n${escapeText(i.image)}`,
    `*Preemptible*\n${i.preemptible ? 'yes' : 'no'}`,
    `*Ephemeral*\n${i.ephemeral ? 'yes' : 'no'}`,
    `*Id*\n\`${escapeText(i.id)}\``,
  ];
  if (i.filesystems && i.filesystems.length > 0) fields.push(`*Filesystems*\n${i.filesystems.length}`);
  // gpuops-job is our own bookkeeping (how a retried create finds its machine), not the user's tag.
  const tags = Object.entries(i.tags ?? {}).filter(([k]) => k !== 'gpuops-job');
  const blocks: KnownBlock[] = [
    { type: 'section', text: { type: 'mrkdwn', text: `*${escapeText(i.name)}*` } },
    { type: 'section', fields: fields.slice(0, 10).map((text) => ({ type: 'mrkdwn' as const, text })) },
  ];
  if (tags.length > 0) {
    const text = tags.map(([k, v]) => `\`${escapeText(k)}=${escapeText(v)}\``).join(' ');
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: clip(`Tags: ${text}`, 2000) }] });
  }
  return blocks;
}
