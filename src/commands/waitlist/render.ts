import type { KnownBlock } from '@slack/types';
import { z } from 'zod';
import { clip, escapeText } from '../../render/job-message.js';
import { slackDate } from '../../render/slack-date.js';
import type { WaitlistEntry } from '../../store/waitlist.js';

// The capacity waitlist as a channel reads it: the list, and the one message that says the capacity
// is there, with a Create button that opens the create form with the type filled in. Pure builders.

export const WAITLIST_CREATE_ACTION = 'gpuops.waitlist.create';

const valueSchema = z.object({ t: z.string().min(1).max(63), c: z.number().int().min(1) });
export type WaitlistButtonValue = z.infer<typeof valueSchema>;

export function readWaitlistButtonValue(value: string | undefined): WaitlistButtonValue | undefined {
  if (!value) return undefined;
  try {
    const parsed = valueSchema.safeParse(JSON.parse(value));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

const when = slackDate;

export function waitlistLine(e: WaitlistEntry): string {
  const count = e.count === 1 ? '1 machine' : `${e.count} machines`;
  return `• \`${e.id}\` · *${escapeText(e.type)}* · ${count} · asked by <@${e.by}> ${when(e.createdAt)}`;
}

export function waitlistBlocks(entries: readonly WaitlistEntry[]): { text: string; blocks: KnownBlock[] } {
  if (entries.length === 0) {
    const text =
      'This channel waits for no capacity. Add a type with `/gpu waitlist <type> [<count>]`: the channel is told once when the cloud lists it.';
    return { text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }] };
  }
  const body = `*Capacity waitlist of this channel*\n${entries.map(waitlistLine).join('\n')}`;
  return {
    text: `Capacity waitlist: ${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}`,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: clip(body) } },
      {
        type: 'context',
        elements: [{ type: 'mrkdwn', text: 'Remove one with `/gpu waitlist rm <id>`.' }],
      },
    ],
  };
}

/** The one message that tells the channel the capacity it waited for is listed now. */
export function capacityAvailableMessage(input: {
  readonly entry: WaitlistEntry;
  /** Free machines, where the cloud lists capacity; undefined when the price list offered the type. */
  readonly capacity: number | undefined;
}): { text: string; blocks: KnownBlock[] } {
  const { entry, capacity } = input;
  const type = escapeText(entry.type);
  const asked = entry.count === 1 ? '1 machine' : `${entry.count} machines`;
  const seen =
    capacity !== undefined
      ? `the cloud lists ${capacity} now`
      : 'the price list offers it now (it cannot say how many machines are free)';
  const head = `:tada: Capacity for *${type}* is available: ${seen} (<@${entry.by}> asked for ${asked}, waitlist \`${entry.id}\`).`;
  const value = JSON.stringify({ t: entry.type, c: entry.count });
  return {
    text:
      capacity !== undefined
        ? `Capacity for ${entry.type} is available: ${capacity} now.`
        : `${entry.type} is offered now.`,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: clip(head) } },
      {
        type: 'actions',
        block_id: 'gpuops.waitlist.actions',
        elements: [
          {
            type: 'button',
            action_id: WAITLIST_CREATE_ACTION,
            text: { type: 'plain_text', text: 'Create', emoji: true },
            style: 'primary',
            value,
          },
        ],
      },
      {
        type: 'context',
        elements: [
          {
            type: 'mrkdwn',
            text: 'Capacity goes to whoever creates first. This entry is now off the waitlist; add it again to be told next time.',
          },
        ],
      },
    ],
  };
}
