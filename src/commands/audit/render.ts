import type { KnownBlock } from '@slack/types';
import { clip, escapeText, formatElapsed } from '../../render/job-message.js';
import type { AuditEntry } from '../../store/audit.js';
import { type Message, slackDate, who } from '../approvals/render.js';

// The audit trail as people read it: one line per entry (also what the audit channel gets), and
// `/gpu audit`'s list.

/** One audit entry as a line for `/gpu audit` and the audit channel. */
export function auditLine(entry: AuditEntry): string {
  const target = entry.target ? ` ${escapeText(entry.target)}` : '';
  const parts = [
    slackDate(entry.at),
    `*${entry.event}*`,
    who(entry.actor),
    `\`${escapeText(entry.operation)}\`${target}`,
    ...(entry.outcome ? [escapeText(entry.outcome)] : []),
    ...(entry.approver ? [`approver ${who(entry.approver)}`] : []),
    ...(entry.project ? [`project \`${escapeText(entry.project)}\``] : []),
    ...(entry.durationMs !== undefined ? [formatElapsed(entry.durationMs)] : []),
  ];
  return clip(parts.join(' · '), 1000);
}

/** `/gpu audit [n]`: the newest entries first, packed into as few sections as fit. */
export function auditList(entries: readonly AuditEntry[], asked: number): Message {
  if (entries.length === 0) {
    const text = 'The audit trail is empty (within its retention).';
    return { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }] };
  }
  const blocks: KnownBlock[] = [];
  let chunk = '';
  let shown = 0;
  for (const entry of entries) {
    const line = auditLine(entry);
    if (chunk.length + line.length + 1 > 2900) {
      if (blocks.length >= 46) break;
      blocks.push({ type: 'section', text: { type: 'mrkdwn', text: chunk } });
      chunk = '';
    }
    chunk += `${chunk ? '\n' : ''}${line}`;
    shown += 1;
  }
  if (chunk) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: chunk } });
  const head = `*Audit trail: the latest ${shown} of ${asked} asked*, newest first`;
  const cut = shown < entries.length ? ' · the rest did not fit: `gpuops audit export` writes all of it' : '';
  return {
    text: `Audit trail: ${shown} entries`,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `${head}${cut}` } },
      ...blocks,
      {
        type: 'context',
        elements: [{ type: 'mrkdwn', text: 'Export everything: `gpuops audit export --out audit.jsonl`' }],
      },
    ],
  };
}
