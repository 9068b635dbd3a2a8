import { expect } from 'vitest';
import {
  APPROVE_ACTION,
  DENY_ACTION,
  DENY_CALLBACK,
  EXTEND_ACTION,
} from '../../src/commands/approvals/render.js';
import { encodeModalMetadata, type ModalMetadata } from '../../src/commands/forms/modal-metadata.js';
import type { StoredMessage } from '../../src/devkit/fake-slack-api.js';
import { addSystemJob } from '../../src/jobs/system-jobs.js';
import type { ApprovalRequest } from '../../src/store/approvals.js';
import { readCatalog } from '../../src/store/catalog-cache.js';
import type { BotStack } from '../support/bot-stack.js';
import { until } from '../support/gpuops-process.js';
import { blockActionsPayload, type SignedResponse, viewSubmissionPayload } from '../support/slack-driver.js';

// What people do with guardrails on, for the e2e tests: ask for something that waits for an approver,
// click Approve or Deny on its card, give a reason; and read what they see afterwards.

export const REQUEST_CHANNEL = 'C0GPU';

export { until };

/** Fills the price list the listener reads (as the scheduled refresh does in production). */
export async function primeCatalog(stack: BotStack): Promise<void> {
  await addSystemJob(
    stack.queue,
    { v: 1, system: 'catalog.refresh', projectId: stack.sim.info.projectId },
    `prime-${Date.now()}`,
  );
  await until(
    async () => (await readCatalog(stack.store, stack.sim.info.projectId))?.catalog.configurations,
    'the catalogue',
  );
}

export interface Pending {
  readonly approvalId: string;
  /** The listener's ephemeral answer to the requester. */
  readonly ack: string;
  readonly card: StoredMessage;
  readonly cardChannel: string;
  /** The requester's own message in their channel (channel-delivered kinds). */
  readonly requesterTs: string | undefined;
}

/** `/gpu <text>` that must wait for an approver: returns its card and the requester's message. */
export async function askForApproval(
  stack: BotStack,
  text: string,
  options: { userId?: string; channelId?: string; approvalChannel: string },
): Promise<Pending> {
  const since = stack.slack.mark();
  const channelId = options.channelId ?? REQUEST_CHANNEL;
  const { answer } = await stack.command(text, {
    ...(options.userId ? { userId: options.userId } : {}),
    channelId,
  });
  const ack = String((await answer()).text ?? '');
  expect(ack, `ack of "${text}"`).toContain('needs an approval');
  // The requester's message goes first, then the card (after the acknowledgement): once the card is
  // there, both are.
  const posted = await stack.slack.waitFor(
    'chat.postMessage',
    (c) =>
      c.body.channel === options.approvalChannel && !String(c.body.text).startsWith('Waiting for approval'),
    5_000,
    since,
  );
  const ts = String((posted.response as { ts: string }).ts);
  const card = stack.slack.message(options.approvalChannel, ts)!;
  const approvalId = buttonValue(card, 'Approve');
  const mine = stack.slack
    .callsTo('chat.postMessage')
    .find(
      (c) =>
        c.index >= since &&
        c.body.channel === channelId &&
        String(c.body.text).startsWith('Waiting for approval'),
    );
  return {
    approvalId,
    ack,
    card,
    cardChannel: options.approvalChannel,
    requesterTs: mine ? String((mine.response as { ts: string }).ts) : undefined,
  };
}

interface Button {
  readonly type: string;
  readonly text: { readonly text: string };
  readonly value?: string;
  readonly action_id: string;
}

/** Every button of a message (or blocks), in order. */
export function buttonsOf(blocks: readonly unknown[] | undefined): Button[] {
  return (blocks ?? []).flatMap((b) => {
    const block = b as { type?: string; elements?: unknown[] };
    return block.type === 'actions' ? ((block.elements ?? []) as Button[]) : [];
  });
}

export function buttonValue(message: StoredMessage, label: string): string {
  const button = buttonsOf(message.blocks).find((b) => b.text.text === label);
  if (!button?.value) throw new Error(`no ${label} button on ${message.text}`);
  return button.value;
}

/** A click on the card's Approve (or Deny) as `userId`, signed as Slack signs it. */
export function click(
  stack: BotStack,
  pending: Pick<Pending, 'approvalId' | 'cardChannel' | 'card'>,
  userId: string,
  label: 'Approve' | 'Deny' = 'Approve',
  triggerId?: string,
): Promise<SignedResponse> {
  return stack.interact(
    blockActionsPayload({
      actionId: label === 'Approve' ? APPROVE_ACTION : DENY_ACTION,
      value: pending.approvalId,
      text: label,
      userId,
      userName: userId.toLowerCase(),
      channelId: pending.cardChannel,
      message: { ts: pending.card.ts, text: pending.card.text ?? '', blocks: pending.card.blocks ?? [] },
      ...(triggerId ? { triggerId } : {}),
    }),
  );
}

/** The reminder a lease sends its owner before it stops, and its Extend button. */
export interface LeaseReminder {
  /** The owner's DM, where the reminder is. */
  readonly dm: string;
  readonly message: StoredMessage;
  /** Extend pressed as `userId`, signed as Slack signs it; `value` is the button's own unless given. */
  extend(userId: string, value?: string): Promise<SignedResponse>;
}

/** Waits for the lease reminder ("stops in about …") in `owner`'s DM. */
export async function leaseReminder(stack: BotStack, owner: string): Promise<LeaseReminder> {
  const dm = stack.slack.dmChannelFor(owner);
  const message = await until(
    () => stack.slack.messages(dm).find((m) => /stops in about/.test(String(m.text))),
    'the reminder',
  );
  // The button as first sent: the fake edits the message in place once it is extended.
  const own = buttonsOf(message.blocks).find((b) => b.text.text === 'Extend')?.value;
  const extend = (userId: string, value = own) =>
    stack.interact(
      blockActionsPayload({
        actionId: EXTEND_ACTION,
        value: value ?? buttonValue(message, 'Extend'),
        text: 'Extend',
        userId,
        channelId: dm,
        message: { ts: message.ts, text: message.text ?? '', blocks: message.blocks ?? [] },
      }),
    );
  return { dm, message, extend };
}

/** Deny with a reason: the click opens the reason modal, which is then submitted. */
export async function denyWithReason(
  stack: BotStack,
  pending: Pending,
  userId: string,
  reason: string,
): Promise<void> {
  const triggerId = stack.slack.issueTriggerId();
  const since = stack.slack.mark();
  expect((await click(stack, pending, userId, 'Deny', triggerId)).status).toBe(200);
  const opened = await stack.slack.waitFor(
    'views.open',
    (c) => c.body.trigger_id === triggerId,
    3_000,
    since,
  );
  expect(opened.response).toMatchObject({ ok: true });
  const view = stack.slack.views.get((opened.response as { view: { id: string } }).view.id)!;
  expect(view.view.callback_id).toBe(DENY_CALLBACK);
  const submitted = await stack.interact(
    viewSubmissionPayload({
      callbackId: DENY_CALLBACK,
      userId,
      values: { reason: { value: { type: 'plain_text_input', value: reason } } },
      privateMetadata: String(view.view.private_metadata),
      viewId: view.id,
      blocks: view.view.blocks as unknown[],
    }),
  );
  expect(submitted.status).toBe(200);
}

/** The ephemeral message `userId` got after index `since` that matches. */
export function ephemeralTo(stack: BotStack, userId: string, pattern: RegExp) {
  return until(
    () => stack.slack.ephemerals.find((e) => e.user === userId && pattern.test(String(e.text))),
    `an ephemeral to ${userId} matching ${pattern}`,
  );
}

/** Request jobs (not the bot's own scheduled ones) waiting, running or delayed. */
export async function requestJobsInQueue(stack: BotStack) {
  const jobs = await stack.queue.getJobs(['waiting', 'active', 'delayed', 'prioritized']);
  return jobs.filter((j) => j && !('system' in (j.data as object)));
}

/** Waits until the job with this id has finished (done or failed for good). */
export async function finished(stack: BotStack, jobId: string, timeoutMs = 20_000): Promise<void> {
  await until(
    async () => {
      const job = await stack.queue.getJob(jobId);
      return job ? (await job.isCompleted()) || (await job.isFailed()) : false;
    },
    `job ${jobId} to finish`,
    timeoutMs,
  );
}

/** The request as stored. */
export async function stored(stack: BotStack, id: string): Promise<ApprovalRequest> {
  const request = await stack.guardrails!.approvals.get(id);
  if (!request) throw new Error(`no approval ${id}`);
  return request;
}

/** The channel message with `ts` once its text matches. */
export async function messageWhen(
  stack: BotStack,
  channel: string,
  ts: string,
  pattern: RegExp,
  timeoutMs = 20_000,
) {
  return until(
    () => {
      const m = stack.slack.message(channel, ts);
      return m && pattern.test(String(m.text)) ? m : undefined;
    },
    `message ${ts} in ${channel} to match ${pattern}`,
    timeoutMs,
  );
}

/** A submitted create form (name and type typed in), from `userId`, opened with `metadata`. */
export function createFormSubmission(
  userId: string,
  metadata: ModalMetadata,
  name: string,
  type = 'h100-hgx-80gb.1x',
): Record<string, unknown> {
  const field = (blockId: string, label: string) => ({
    type: 'input',
    block_id: blockId,
    label: { type: 'plain_text', text: label },
    element: { type: 'plain_text_input', action_id: 'value' },
  });
  return viewSubmissionPayload({
    callbackId: 'gpuops.form.create',
    userId,
    privateMetadata: encodeModalMetadata(metadata),
    blocks: [field('name', 'Name'), field('type', 'Type')],
    values: {
      name: { value: { type: 'plain_text_input', value: name } },
      type: { value: { type: 'plain_text_input', value: type } },
    },
  });
}
