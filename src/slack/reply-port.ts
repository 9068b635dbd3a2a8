import type { KnownBlock } from '@slack/types';
import type { WebClient } from '@slack/web-api';
import type { ReplyContent, ReplyPort, ReplyRoute, ReplyTarget } from '../commands/kit/reply-port.js';
import {
  classifySlackFailure,
  RESPONSE_URL_USABLE_MS,
  responseUrlTook,
  slackCode,
} from '../commands/kit/slack-failure.js';
import type { Logger } from '../log/logger.js';
import { postResponseUrl } from './response-url.js';

// The workers' way to answer a person (src/commands/kit/reply-port.ts): a request's response_url
// while Slack still takes answers on it, then an ephemeral where they asked, then a direct message.
// Slack's answers are read by slack-failure.ts alone; a failed way is logged with its code, never the
// answer's text.

type Client = Pick<WebClient, 'chat' | 'conversations'>;

export interface ReplyPortDeps {
  readonly client: Client;
  readonly log: Logger;
  readonly now?: () => number;
}

const blocksOf = (content: ReplyContent): { blocks?: KnownBlock[] } =>
  content.blocks ? { blocks: [...content.blocks] } : {};

export function createReplyPort(deps: ReplyPortDeps): ReplyPort {
  const { client, log } = deps;
  const now = deps.now ?? Date.now;

  const dm = async (userId: string, content: ReplyContent): Promise<void> => {
    // The DM's own id, as Slack asks; a user id also reaches the app's Messages tab, should it fail.
    const channel = await client.conversations.open({ users: userId }).then(
      (opened) => opened.channel?.id ?? userId,
      (err: unknown) => {
        log.info({ code: slackCode(err) }, 'could not open a direct message; posting to the user id');
        return userId;
      },
    );
    await client.chat.postMessage({ channel, text: content.text, ...blocksOf(content) });
  };

  const privately = async (
    target: ReplyTarget,
    content: ReplyContent,
    options: { readonly replace?: boolean } = {},
  ): Promise<ReplyRoute> => {
    const url = target.responseUrl;
    const young = target.issuedAt === undefined || now() - target.issuedAt < RESPONSE_URL_USABLE_MS;
    if (url && young) {
      const status = await postResponseUrl(url, {
        response_type: 'ephemeral',
        replace_original: options.replace === true,
        text: content.text,
        ...blocksOf(content),
      });
      if (responseUrlTook(status)) return 'response_url';
      log.info(
        { status },
        'the response_url did not take an answer (expired or used up); trying an ephemeral',
      );
    }
    const channel = target.channelId;
    if (channel && channel !== target.userId) {
      try {
        await client.chat.postEphemeral({
          channel,
          user: target.userId,
          text: content.text,
          ...blocksOf(content),
        });
        return 'ephemeral';
      } catch (err) {
        log.info({ code: slackCode(err) }, 'could not answer by an ephemeral; sending a direct message');
      }
    }
    await dm(target.userId, content);
    return 'dm';
  };

  return {
    privately,
    dm,
    async show(target, content, message) {
      if (message) {
        try {
          await client.chat.update({
            channel: message.channel,
            ts: message.ts,
            text: content.text,
            ...blocksOf(content),
          });
          return 'edit';
        } catch (err) {
          const failure = classifySlackFailure(err);
          // Transient failures were retried by the client already; whatever is left, the person must
          // still hear: privately, in the channel only where the bot may post there.
          log.info(
            { code: slackCode(err), kind: failure.kind },
            'could not edit the message; answering privately',
          );
          if (failure.kind === 'permanent' || failure.kind === 'message-gone') {
            const { channelId: _blocked, ...elsewhere } = target;
            return privately(failure.kind === 'permanent' ? elsewhere : target, content);
          }
        }
      }
      return privately(target, content);
    },
  };
}
