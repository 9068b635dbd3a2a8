import { clip, escapeText } from '../../render/job-message.js';
import type { Lease } from '../../store/leases.js';
import { EXTEND_ACTION, humanDuration, type Message, plainDate, slackDate, who } from './render.js';

// A costly machine's lease, as its owner sees it: the reminder before its stop time with Extend, the
// extension, and the end.

/** The DM before a lease ends, with Extend. */
export function leaseReminder(lease: Lease, now: number): Message {
  const left = humanDuration(Math.max(0, Math.round((lease.stopAt - now) / 1000)));
  const cost = lease.cost ? ` (${escapeText(lease.cost)})` : '';
  const text =
    `:alarm_clock: \`${escapeText(lease.instance)}\`${cost} stops at ${slackDate(lease.stopAt)}, in about ${left}: ` +
    `its lease from the approval of \`${escapeText(lease.request)}\`. ` +
    `Press Extend to keep it ${humanDuration(lease.extendSeconds)} longer.`;
  return {
    text: `${lease.instance} stops in about ${left} (lease). Extend it if you still need it.`,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: clip(text) } },
      {
        type: 'actions',
        block_id: 'lease',
        elements: [
          {
            type: 'button',
            action_id: EXTEND_ACTION,
            text: { type: 'plain_text', text: 'Extend' },
            style: 'primary',
            value: `${lease.id}|${lease.stopAt}`,
          },
        ],
      },
    ],
  };
}

/** The reminder after Extend: the new stop time, no button. */
export function leaseExtended(lease: Lease, by: string): Message {
  const text = `:white_check_mark: Extended by ${who(by)}: \`${escapeText(lease.instance)}\` now stops at ${slackDate(lease.stopAt)}.`;
  return {
    text: `${lease.instance} now stops at ${plainDate(lease.stopAt)}.`,
    blocks: [{ type: 'section', text: { type: 'mrkdwn', text: clip(text) } }],
  };
}

/** The DM when a lease ends and the machine is being stopped. */
export function leaseEnded(lease: Lease): Message {
  const text =
    `:stopwatch: The lease of \`${escapeText(lease.instance)}\` ended at ${slackDate(lease.stopAt)}: gpuops is stopping it. ` +
    `Its disk is kept; \`/gpu start ${escapeText(lease.instance)}\` starts it again (it may need an approval).`;
  return {
    text: `The lease of ${lease.instance} ended: stopping it.`,
    blocks: [{ type: 'section', text: { type: 'mrkdwn', text: clip(text) } }],
  };
}
