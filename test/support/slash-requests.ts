import { expect } from 'vitest';
import type { StoredMessage } from '../../src/devkit/fake-slack-api.js';
import type { BotStack } from './bot-stack.js';
import type { ResponseUrlPost } from './slack-driver.js';

// What a person sees after typing `/gpu …`, for end-to-end tests: the one channel message a changing
// request shows (and its final text), or the private answer a read-only request gets in place.

export interface Requester {
  readonly userId?: string;
  readonly userName?: string;
  readonly channelId?: string;
}

const DEFAULT_CHANNEL = 'C0GPU';

/** Sends a request that posts a channel message; resolves with that message's ts. */
export async function channelRequest(stack: BotStack, text: string, who: Requester = {}): Promise<string> {
  const since = stack.slack.mark();
  const { response, answer } = await stack.command(text, who);
  const channel = who.channelId ?? DEFAULT_CHANNEL;
  const posted = await stack.slack
    .waitFor('chat.postMessage', (c) => c.body.channel === channel, 5_000, since)
    .catch(async () => {
      // No channel message: say what the person got instead (a refusal, an approval, nothing).
      const reply = response.text.trim() === '' ? '' : String((await answer()).text);
      throw new Error(
        `"/gpu ${text}" posted no message in ${channel}; the person saw ${reply ? `the listener's answer "${reply}"` : `nothing (HTTP ${response.status})`}.`,
      );
    });
  return String((posted.response as { ts: string }).ts);
}

/** The channel message once it shows `phase` (Done or Failed), with its edit history. */
export async function finalMessage(
  stack: BotStack,
  ts: string,
  phase: 'Done' | 'Failed',
  channel = DEFAULT_CHANNEL,
  timeoutMs = 15_000,
): Promise<StoredMessage> {
  await stack.slack
    .waitFor('chat.update', (c) => c.body.ts === ts && /^(Done|Failed):/.test(String(c.body.text)), timeoutMs)
    .catch(() => {
      const history = (stack.slack.message(channel, ts)?.history ?? []).map((v) => `"${String(v.text)}"`);
      throw new Error(
        `the request's message never said ${phase} within ${timeoutMs} ms; the person saw ${history.join(', then ') || 'no message'}.`,
      );
    });
  const message = stack.slack.message(channel, ts)!;
  expect(String(message.text).split(':')[0], `the person saw "${String(message.text)}"`).toBe(phase);
  return message;
}

/** Sends a request and waits for its outcome in the channel. */
export async function settled(
  stack: BotStack,
  text: string,
  phase: 'Done' | 'Failed',
  who: Requester = {},
): Promise<StoredMessage> {
  const ts = await channelRequest(stack, text, who);
  return finalMessage(stack, ts, phase, who.channelId ?? DEFAULT_CHANNEL);
}

/** Sends a read-only request; resolves with the ephemeral answer that replaced the "looking" note. */
export async function privateAnswer(
  stack: BotStack,
  text: string,
  who: Requester = {},
): Promise<ResponseUrlPost> {
  const { responseUrl, answer } = await stack.command(text, who);
  expect((await answer()).text, `the listener's first answer to "/gpu ${text}"`).toMatch(/Looking that up/);
  const post = await stack.responses.waitForPost((p) => responseUrl.endsWith(p.id), 15_000);
  expect(post.replaceOriginal).toBe(true);
  expect(post.responseType).toBe('ephemeral');
  return post;
}

/** Everything a private answer shows, text and blocks, as one string to search. */
export function shown(post: ResponseUrlPost): string {
  return `${String(post.body.text)}\n${JSON.stringify(post.body.blocks ?? [])}`;
}

/** The immediate answer of a request the listener refuses (parse error, shape lacks it). */
export async function refused(stack: BotStack, text: string, who: Requester = {}): Promise<string> {
  const body = await (await stack.command(text, who)).answer();
  expect(body.response_type, `the listener's answer to "/gpu ${text}": ${String(body.text)}`).toBe(
    'ephemeral',
  );
  return String(body.text);
}

/**
 * Sends a request the listener must refuse before anything happens (a name that is not there): its
 * one private sentence, after checking that the channel saw no message and no job was queued.
 */
export async function answeredPrivately(stack: BotStack, text: string, who: Requester = {}): Promise<string> {
  const channel = who.channelId ?? DEFAULT_CHANNEL;
  const since = stack.slack.mark();
  const jobsBefore = (await stack.store.recentJobs(channel, 50)).length;
  const answer = await refused(stack, text, who);
  const posted = stack.slack.calls.slice(since).filter((c) => c.method === 'chat.postMessage');
  expect(posted, `"/gpu ${text}" posted to the channel`).toEqual([]);
  expect((await stack.store.recentJobs(channel, 50)).length, `"/gpu ${text}" queued a job`).toBe(jobsBefore);
  return answer;
}
