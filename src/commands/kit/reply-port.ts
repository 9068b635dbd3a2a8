import type { KnownBlock } from '@slack/types';
import type { MessageRef } from '../../jobs/message-ref.js';

// How workers answer a person, as Bolt's `respond` and `say` do for listeners: through a port the
// composition root builds in slack/ (src/slack/reply-port.ts), never through a raw Web API client.
// Each answer tries the next way when one fails, so it reaches the person once.

export interface ReplyContent {
  readonly text: string;
  readonly blocks?: readonly KnownBlock[] | undefined;
}

/** Who to answer, and the ways to them a request left. */
export interface ReplyTarget {
  readonly userId: string;
  /** Where they asked: an ephemeral there is the next way once the response_url cannot be used. */
  readonly channelId?: string | undefined;
  readonly responseUrl?: string | undefined;
  /** When Slack issued the response_url (the request's time): it takes answers for 30 minutes. */
  readonly issuedAt?: number | undefined;
}

/** The way an answer reached the person. */
export type ReplyRoute = 'edit' | 'response_url' | 'ephemeral' | 'dm';

export interface ReplyPort {
  /**
   * Answers one person privately: the response_url while it takes answers (`replace`: in place of
   * the answer it shows, the "looking" note), then chat.postEphemeral where they asked, then a direct
   * message. Resolves with the way that worked; rejects only when none did.
   */
  privately(
    target: ReplyTarget,
    content: ReplyContent,
    options?: { readonly replace?: boolean },
  ): Promise<ReplyRoute>;
  /**
   * Edits `message` (the request's own message, which everyone in its channel sees); where it cannot
   * be edited (the bot cannot post there, the message is gone) or there is none, answers privately.
   */
  show(target: ReplyTarget, content: ReplyContent, message?: MessageRef): Promise<ReplyRoute>;
  /** A direct message from the bot (conversations.open, then chat.postMessage). */
  dm(userId: string, content: ReplyContent): Promise<void>;
}

/** The person who made a request waiting for approval, and the ways to them it left. */
export function requesterTarget(request: {
  readonly requester: string;
  readonly ctx: {
    readonly channelId: string;
    readonly responseUrl?: string | undefined;
    readonly requestedAt: number;
  };
}): ReplyTarget {
  return {
    userId: request.requester,
    channelId: request.ctx.channelId,
    responseUrl: request.ctx.responseUrl,
    issuedAt: request.ctx.requestedAt,
  };
}
