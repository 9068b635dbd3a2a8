import type { KnownBlock } from '@slack/types';
import type { WebClient } from '@slack/web-api';
import { failWaitingStep } from '../commands/kit/finish-step.js';
import type { Logger } from '../log/logger.js';
import type { DecisionPorts } from '../requests/drive-approved.js';

/** The request lifecycle's edits and private notes (requests/drive-approved.ts), through the Web API. */
export function slackDecisionPorts(deps: {
  readonly client: WebClient;
  readonly log: Logger;
}): DecisionPorts {
  const blocksOf = (blocks: readonly KnownBlock[] | undefined) =>
    blocks ? { blocks: blocks as KnownBlock[] } : {};
  return {
    async update(ref, message) {
      await deps.client.chat.update({
        channel: ref.channel,
        ts: ref.ts,
        text: message.text,
        ...blocksOf(message.blocks),
      });
    },
    async tell(channel, user, message) {
      await deps.client.chat.postEphemeral({
        channel,
        user,
        text: message.text,
        ...blocksOf(message.blocks),
      });
    },
    failWaitingStep: (request) => failWaitingStep({ slack: deps.client, log: deps.log }, request),
  };
}
