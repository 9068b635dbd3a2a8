import type { KnownBlock } from '@slack/types';
import type { WebClient } from '@slack/web-api';
import { failWaitingStep, finishStep } from '../commands/kit/finish-step.js';
import { describeCommand } from '../commands/registry.js';
import type { Logger } from '../log/logger.js';
import type { DecisionPorts } from '../requests/drive-approved.js';
import { createReplyPort } from './reply-port.js';

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
    async show(target, message, ref) {
      await createReplyPort({ client: deps.client, log: deps.log }).show(target, message, ref);
    },
    async failWaitingStep(request) {
      const step = request.ctx.step;
      if (step && request.stage === 'lapsed') {
        const error = `${describeCommand(request.command)} was approved, but gpuops could not store its job on two servers in time. Nothing was changed; run the workflow again.`;
        await finishStep({ slack: deps.client, log: deps.log }, step, { ok: false, error });
        return;
      }
      await failWaitingStep({ slack: deps.client, log: deps.log }, request);
    },
  };
}
