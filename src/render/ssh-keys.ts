import { createHash } from 'node:crypto';
import type { KnownBlock } from '@slack/types';
import { clip, escapeText } from './job-message.js';

// SSH keys as people read them. A list never shows a whole key: its type, the SHA256 fingerprint
// that `ssh-keygen -lf` prints, and its comment are enough to recognise it.

export interface KeyView {
  readonly name: string;
  /** The public key as the account holds it; the platform API may leave it out. */
  readonly publicKey?: string | null | undefined;
  /** The Slack user who added it through gpuops, when known. */
  readonly ownerId?: string | undefined;
}

/** `SHA256:…` as OpenSSH prints it (base64 of the SHA-256 of the key blob, no padding). */
export function sshKeyFingerprint(publicKey: string): string | undefined {
  const blob = publicKey.trim().split(/\s+/)[1];
  if (!blob || !/^[A-Za-z0-9+/]+={0,2}$/.test(blob)) return undefined;
  const digest = createHash('sha256').update(Buffer.from(blob, 'base64')).digest('base64');
  return `SHA256:${digest.replace(/=+$/, '')}`;
}

/**
 * Type, fingerprint and (for the requester's eyes) comment: `ssh-ed25519 SHA256:abc… ada@laptop`.
 * Channel messages leave the comment out: it is often an e-mail address.
 */
export function shortKey(publicKey: string | null | undefined, withComment = true): string {
  if (!publicKey) return 'key not shown by the API';
  const [type = '?', , ...comment] = publicKey.trim().split(/\s+/);
  const fingerprint = sshKeyFingerprint(publicKey) ?? 'unreadable key data';
  const note = withComment ? comment.join(' ') : '';
  return `${type} ${fingerprint}${note ? ` ${clip(note, 80)}` : ''}`;
}

export function keyLine(key: KeyView): string {
  const owner = key.ownerId ? `added by <@${key.ownerId}>` : 'owner unknown';
  return `:key: *${escapeText(key.name)}* · \`${escapeText(shortKey(key.publicKey))}\` · ${owner}`;
}

/** What `/gpu keys add` shows in the channel when done: the key, short and without comment, and its owner. */
export function keyAddedBlocks(key: KeyView): KnownBlock[] {
  return [
    {
      type: 'section',
      fields: [
        { type: 'mrkdwn', text: `*Name*\n${escapeText(key.name)}` },
        { type: 'mrkdwn', text: `*Owner*\n${key.ownerId ? `<@${key.ownerId}>` : '—'}` },
        { type: 'mrkdwn', text: `*Key*\n\`${escapeText(shortKey(key.publicKey, false))}\`` },
      ],
    },
  ];
}
