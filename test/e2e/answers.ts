import { expect } from 'vitest';
import type { BotStack } from '../support/bot-stack.js';
import type { ResponseUrlPost } from '../support/slack-driver.js';

// What a user sees after `/gpu …`, for the e2e tests of catalogue, keys, filesystems, metrics and
// kubeconfig: the channel message a job edits, or the private answer that replaces the "looking" note.

export const CHANNEL = 'C0GPU';

interface As {
  readonly userId?: string;
  readonly userName?: string;
}

export { channelRequest, finalMessage } from '../support/slash-requests.js';

/** Sends a privately answered request; returns the job's answer posted to the response_url. */
export async function privateAnswer(
  stack: BotStack,
  text: string,
  as: As = {},
  timeoutMs = 15_000,
): Promise<ResponseUrlPost & { text: string; blocksJson: string }> {
  const { responseUrl, answer } = await stack.command(text, as);
  const ack = await answer();
  expect(ack.response_type, `ack of "${text}": ${String(ack.text)}`).toBe('ephemeral');
  const id = responseUrl.split('/').at(-1);
  const post = await stack.responses.waitForPost((p) => p.id === id, timeoutMs);
  expect(post.replaceOriginal).toBe(true);
  expect(post.responseType).toBe('ephemeral');
  return { ...post, text: String(post.body.text ?? ''), blocksJson: JSON.stringify(post.body.blocks ?? []) };
}

/** The listener's own answer (parse errors, shapes without the operation): nothing is queued. */
export async function listenerAnswer(stack: BotStack, text: string): Promise<string> {
  const body = await (await stack.command(text)).answer();
  expect(body.response_type).toBe('ephemeral');
  return String(body.text ?? '');
}

/** Nothing the user saw broke Block Kit limits, and the fakes saw nothing unexpected. */
export function expectCleanSlack(stack: BotStack): void {
  expect(stack.slack.violations).toEqual([]);
  expect(stack.slack.unexpected).toEqual([]);
  expect(stack.responses.violations).toEqual([]);
}
