import type { KnownBlock } from '@slack/types';
import type { Filesystem } from '../cloud/index.js';
import { escapeText } from './job-message.js';

// Filesystems as people read them.

export function filesystemLine(fs: Filesystem): string {
  return `:file_cabinet: *${escapeText(fs.name)}* · ${escapeText(fs.size)} · \`${escapeText(fs.id)}\``;
}

export function filesystemDetailBlocks(fs: Filesystem): KnownBlock[] {
  return [
    {
      type: 'section',
      fields: [
        { type: 'mrkdwn', text: `*Name*\n${escapeText(fs.name)}` },
        { type: 'mrkdwn', text: `*Size*\n${escapeText(fs.size)}` },
        { type: 'mrkdwn', text: `*Id*\n\`${escapeText(fs.id)}\`` },
      ],
    },
  ];
}
