import type { KnownBlock } from '@slack/types';
import type { RequestPorts } from '../requests/ports.js';
import { groupsOf, type MembershipDeps } from './group-membership.js';

/**
 * The request pipeline's view of Slack: posting and deleting the bot's messages, user groups, and
 * (with `refreshHome`) publishing people's Home tabs again.
 */
export function slackRequestPorts(
  deps: MembershipDeps & { readonly refreshHome?: ((userId: string) => Promise<void>) | undefined },
): RequestPorts {
  const refresh = deps.refreshHome && coalesced(deps.refreshHome, deps.log);
  return {
    ...(refresh ? { refreshHomes: async (userIds) => void (await Promise.all(userIds.map(refresh))) } : {}),
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

/**
 * One publish at a time per person: asked again while one is under way, it runs once more after it
 * (the newest state), however many times it was asked meanwhile. Never rejects.
 */
function coalesced(
  publish: (userId: string) => Promise<void>,
  log: MembershipDeps['log'],
): (userId: string) => Promise<void> {
  const running = new Map<string, { again: boolean; done: Promise<void> }>();
  return (userId) => {
    const current = running.get(userId);
    if (current) {
      current.again = true;
      return current.done;
    }
    const entry = { again: false, done: Promise.resolve() };
    entry.done = (async () => {
      do {
        entry.again = false;
        await publish(userId).catch((err: unknown) =>
          log.warn({ err, userId }, 'could not publish a Home tab again'),
        );
      } while (entry.again);
      running.delete(userId);
    })();
    running.set(userId, entry);
    return entry.done;
  };
}
