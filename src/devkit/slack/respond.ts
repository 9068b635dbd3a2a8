import type { EphemeralMessage, ResponseOrigin, StoredMessage } from './types.js';

// A post to a response_url, answered as Slack does: the original message replaced or deleted, a
// message posted in the channel (response_type in_channel), or an answer only the person sees. The
// fake's state (slack-state.ts) issues the URLs and makes the changes.

type Json = Record<string, unknown>;

/** The changes a response_url post can make: the fake's messages and ephemeral answers. */
export interface ResponseTarget {
  message(channel: string, ts: string): StoredMessage | undefined;
  store(channel: string, body: Readonly<Json>, threadTs: string | undefined): StoredMessage;
  edit(stored: StoredMessage, body: Readonly<Json>): void;
  remove(stored: StoredMessage): void;
  addEphemeral(
    channel: string,
    user: string,
    body: Readonly<Json>,
    options?: { readonly replacing?: string; readonly replaced?: boolean },
  ): EphemeralMessage;
}

/** Replaces or deletes the original, posts in the channel, or answers privately; [status, answer]. */
export function answerResponseUrl(
  target: ResponseTarget,
  origin: ResponseOrigin,
  body: Json,
): [number, Json] {
  const flag = (v: unknown) => v === true || v === 'true';
  const place = origin.place;
  if (place?.kind === 'message') {
    const message = target.message(place.channel, place.ts);
    if (message && flag(body.delete_original)) {
      target.remove(message);
      return [200, { ok: true }];
    }
    if (message && flag(body.replace_original)) {
      target.edit(message, { text: body.text, blocks: Array.isArray(body.blocks) ? body.blocks : [] });
      return [200, { ok: true }];
    }
  }
  if (body.response_type === 'in_channel') {
    target.store(origin.channelId, body, undefined);
    return [200, { ok: true }];
  }
  if (place?.kind === 'ephemeral' && flag(body.replace_original)) {
    target.addEphemeral(origin.channelId, origin.userId, body, { replacing: place.id });
  } else {
    // Replacing the answer to a command shows the new answer in its place; here, below it.
    target.addEphemeral(origin.channelId, origin.userId, body, { replaced: flag(body.replace_original) });
  }
  return [200, { ok: true }];
}
