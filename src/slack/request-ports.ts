import type { KnownBlock } from '@slack/types';
import type { RequestPorts } from '../requests/ports.js';
import { groupsOf, type MembershipDeps } from './group-membership.js';

/** The request pipeline's view of Slack: posting and deleting the bot's messages, and user groups. */
export function slackRequestPorts(deps: MembershipDeps): RequestPorts {
  return {
    async post(channel, message) {
      const posted = await deps.client.chat.postMessage({
        channel,
        text: message.text,
        ...(message.blocks ? { blocks: message.blocks as KnownBlock[] } : {}),
      });
      return posted.ts ? { channel: posted.channel ?? channel, ts: posted.ts } : undefined;
    },
    async remove(ref) {
      await deps.client.chat.delete({ channel: ref.channel, ts: ref.ts });
    },
    groupsOf: (userId, groups, deadline) => groupsOf(deps, userId, groups, deadline),
  };
}
