import type { KnownBlock } from '@slack/types';
import type { Deadline } from '../commands/kit/deadline.js';
import type { MessageRef } from '../jobs/message-ref.js';

// What the request pipeline needs from the chat it serves, and nothing more: it knows messages and
// user groups, not the Slack SDK. The Slack layer implements it with the Web API (src/slack/
// request-ports.ts); the demo's terminal chat goes through the same Slack layer.

/** A message as the pipeline renders it: text for notifications, Block Kit for the chat. */
export interface ChatMessage {
  readonly text: string;
  readonly blocks?: readonly KnownBlock[];
}

export interface RequestPorts {
  /** Posts a message to a channel; where it landed, or undefined when the chat gave no reference. */
  post(channel: string, message: ChatMessage): Promise<MessageRef | undefined>;
  /** Deletes a message the bot posted. */
  remove(ref: MessageRef): Promise<void>;
  /**
   * The groups among `groups` the person belongs to (roles and approvers can be granted to groups).
   * With the request's `deadline`, rejects with DeadlinePassed when the answer would come too late.
   */
  groupsOf(userId: string, groups: readonly string[], deadline?: AccessDeadline): Promise<readonly string[]>;
  /**
   * Publishes again the Home tab of each of these people (who opened it before), now or shortly,
   * each once however often asked meanwhile. Absent where nothing publishes Home tabs.
   */
  refreshHomes?(userIds: readonly string[]): Promise<void>;
}

/** The request's deadline, and how long before it the access look-ups must give up. */
export interface AccessDeadline {
  readonly deadline: Deadline;
  readonly reserveMs: number;
}
