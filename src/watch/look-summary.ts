import type { KnownBlock } from '@slack/types';
import { clip, escapeText } from '../render/job-message.js';
import { slackDate } from '../render/slack-date.js';
import type { NewOutboxEntry } from '../store/watch-outbox.js';
import type { ResourceChange } from './diff-snapshot.js';
import { changeReply, KIND_LABEL } from './watch-changes.js';

// A look that changes many resources at once (a maintenance, a scale-up) is told as alerting systems
// tell a group of alerts: one summary message per look and channel (how many appeared, changed and
// went, counts by state and by type, the first few names), and every change, one line each, in its
// thread, packed into as few messages as Slack's limits allow. Pure builders.

/** From this many changes in one look, the look is told as one summary with the details in its thread. */
export const GROUP_FROM = 4;

/** Slack's limits on one message (docs.slack.dev: 50 blocks, 3,000 characters in a section's text). */
const MAX_BLOCKS = 50;
const SECTION_CHARS = 3000;
/** Slack truncates a message beyond 40,000 characters; the details stay below, with room for markup. */
const MESSAGE_CHARS = 38_000;
/** One change's line: enough for a node pool whose many nodes changed, and no section overflows. */
const LINE_CHARS = 1000;
/** Names in the summary, and categories in each count line. */
const FIRST_NAMES = 5;
const TOP_COUNTS = 8;

const WHAT: Readonly<Record<ResourceChange['type'], string>> = {
  appeared: 'appeared',
  changed: 'changed',
  gone: 'deleted',
};

/** Who a change is about, as its detail line starts: name, kind (unless a machine), parent, short id, type. */
function whoOf(change: ResourceChange): string {
  const r = change.resource;
  const kind = r.kind === 'instance' ? '' : `${KIND_LABEL[r.kind]} `;
  const where = r.parent ? ` of ${escapeText(r.parent)}` : '';
  const about = [
    `\`${escapeText(r.id.slice(0, 8))}\``,
    ...(r.fields.type ? [escapeText(r.fields.type)] : []),
  ];
  return `${kind}*${escapeText(r.name)}*${where} (${about.join(', ')})`;
}

/** One change as one line of the thread: who, then what moved (the reply the per-resource message gets). */
export function changeLine(change: ResourceChange): string {
  const what = changeReply(change).replaceAll('\n', '; ');
  return clip(`• ${whoOf(change)}: ${what}`, LINE_CHARS);
}

/** The state a change leaves its resource in, for the summary's counts. */
function stateAfter(change: ResourceChange): string {
  if (change.type === 'gone') return 'deleted';
  const f = change.resource.fields;
  return f.state || f.status || 'present';
}

function typeOf(change: ResourceChange): string {
  const r = change.resource;
  return r.fields.type || KIND_LABEL[r.kind];
}

/** "3 running · 2 stopped · +1 more", largest first, ties by name. */
function counted(values: readonly string[], limit = TOP_COUNTS): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  const sorted = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const shown = sorted.slice(0, limit).map(([v, n]) => `${n.toLocaleString('en')} ${escapeText(v)}`);
  const rest = sorted.length - limit;
  return [...shown, ...(rest > 0 ? [`+${rest} more`] : [])].join(' · ');
}

export interface LookSummaryInput {
  readonly changes: readonly ResourceChange[];
  readonly projectId: string;
  /** When the look saw them (unix ms). */
  readonly at: number;
}

/** The summary of a look's changes: what happened, by state, by type, the first names. */
export function lookSummary(input: LookSummaryInput): { text: string; blocks: KnownBlock[] } {
  const { changes, projectId, at } = input;
  const total = changes.length.toLocaleString('en');
  const byWhat = (['appeared', 'changed', 'gone'] as const)
    .map((type) => [type, changes.filter((c) => c.type === type).length] as const)
    .filter(([, n]) => n > 0)
    .map(([type, n]) => `${n.toLocaleString('en')} ${WHAT[type]}`)
    .join(', ');
  const names = changes.slice(0, FIRST_NAMES).map((c) => `*${escapeText(c.resource.name)}*`);
  const more = changes.length - names.length;
  const lines = [
    `:bell: *${total} changes* at one look: ${byWhat}.`,
    `*State now:* ${counted(changes.map(stateAfter))}`,
    `*Type:* ${counted(changes.map(typeOf))}`,
    `*Among them:* ${names.join(', ')}${more > 0 ? ` and ${more.toLocaleString('en')} more` : ''}`,
  ];
  const context = [
    'Every change, one line each, in the thread',
    `project \`${escapeText(projectId)}\``,
    slackDate(at),
  ].join(' · ');
  return {
    text: clip(`${total} changes in project ${projectId}: ${byWhat}. Every change is in the thread.`, 3000),
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: clip(lines.join('\n'), SECTION_CHARS) } },
      { type: 'context', elements: [{ type: 'mrkdwn', text: clip(context, 2000) }] },
    ],
  };
}

/** One message of the thread: its sections, and how many lines they hold. */
export interface DetailPage {
  readonly sections: string[];
  readonly lines: number;
}

/**
 * The change lines packed into messages within Slack's limits: each section holds whole lines up to
 * 3,000 characters, each message up to 50 sections and 38,000 characters.
 */
export function packLines(lines: readonly string[]): DetailPage[] {
  const pages: DetailPage[] = [];
  let sections: string[] = [];
  let section = '';
  let size = 0;
  let count = 0;
  const closeSection = () => {
    if (section) sections.push(section);
    section = '';
  };
  const closePage = () => {
    closeSection();
    if (sections.length > 0) pages.push({ sections, lines: count });
    sections = [];
    size = 0;
    count = 0;
  };
  for (const line of lines) {
    if (size + line.length + 1 > MESSAGE_CHARS) closePage();
    if (section && section.length + 1 + line.length > SECTION_CHARS) {
      closeSection();
      if (sections.length >= MAX_BLOCKS) closePage();
    }
    section = section ? `${section}\n${line}` : line;
    size += line.length + 1;
    count++;
  }
  closePage();
  return pages;
}

/** The outbox entries of a grouped look: the summary, then the details in its thread. */
export function groupedEntries(input: LookSummaryInput): NewOutboxEntry[] {
  const ref = `look:${input.projectId}:${input.at}`;
  const summary = lookSummary(input);
  const pages = packLines(input.changes.map(changeLine));
  const total = input.changes.length.toLocaleString('en');
  let from = 1;
  const details = pages.map(({ sections, lines }, i): NewOutboxEntry => {
    const to = from + lines - 1;
    const text = `Changes ${from.toLocaleString('en')}–${to.toLocaleString('en')} of ${total}`;
    from = to + 1;
    return {
      op: 'message',
      mode: 'post',
      thread: ref,
      text,
      blocks: sections.map((s) => ({ type: 'section', text: { type: 'mrkdwn', text: s } })),
      // The summary is never edited: its ref is let go with the last page.
      ...(i === pages.length - 1 ? { forget: true } : {}),
    };
  });
  return [{ op: 'message', mode: 'post', ref, ...summary }, ...details];
}
