import type { BotStack } from '../support/bot-stack.js';
import { until } from '../support/until.js';
import { violated } from './model.js';
import { type Actor, FINAL_WITHIN_MS, REQUEST_CHANNEL } from './world.js';

// Where a requester can see a request's final answer (docs/reliability.md, "the reply port"): the
// request's own message in the channel, or, where the bot could not post there (`not_in_channel`) or
// the message was never posted, privately: the request's response_url while Slack takes it, else an
// ephemeral in the channel, else a direct message. Invariant 2 looks in all of them.

const FINAL = /(^|\n)(Done|Failed|Denied|Expired)\b/;

/** Final answers about `/gpu <request>` that reached `who` privately since `since` (a mark of the fake). */
export function privateFinals(
  stack: BotStack,
  who: Actor,
  request: string,
  since: number,
  responseUrl?: string,
): string[] {
  const dm = stack.slack.dmChannelFor(who.id);
  const texts = [
    ...(responseUrl ? stack.responses.postsTo(responseUrl).map((p) => String(p.body.text ?? '')) : []),
    ...stack.slack.calls
      .filter(
        (c) =>
          c.index >= since &&
          (c.response as { ok?: boolean } | undefined)?.ok === true &&
          ((c.method === 'chat.postEphemeral' && c.body.user === who.id) ||
            (c.method === 'chat.postMessage' && c.body.channel === dm)),
      )
      .map((c) => String(c.body.text ?? '')),
  ];
  return texts.filter((t) => t.includes(`/gpu ${request}`) && FINAL.test(t));
}

const phaseOf = (text: string) => /(^|\n)(Done|Failed|Denied|Expired)\b/.exec(text)?.[2] ?? '';

/**
 * Waits for the request's final answer wherever its requester can see it: the channel message that
 * `channelTs()` names (it may be posted late, or never), or a private answer. Fails when none comes
 * within the job's worst case, or when the answers seen say both Done and Failed.
 */
export async function finalAnswer(
  stack: BotStack,
  who: Actor,
  request: string,
  opts: {
    readonly since: number;
    readonly responseUrl?: string;
    readonly channelTs: () => string | undefined;
    readonly what: string;
    /** Where the request's message is posted: the requests' channel unless said (a DM, for one). */
    readonly channel?: string;
  },
): Promise<{ readonly text: string; readonly phase: 'Done' | 'Failed' | 'Denied' | 'Expired' }> {
  const channel = opts.channel ?? REQUEST_CHANNEL;
  const read = () => {
    const ts = opts.channelTs();
    const message = ts ? stack.slack.message(channel, ts) : undefined;
    if (message && FINAL.test(String(message.text))) return String(message.text);
    return privateFinals(stack, who, request, opts.since, opts.responseUrl).at(-1);
  };
  const text = await until(`${opts.what} to end`, read, FINAL_WITHIN_MS).catch(() => {
    const ts = opts.channelTs();
    const history = (ts ? (stack.slack.message(channel, ts)?.history ?? []) : []).map(
      (v) => `"${String(v.text)}"`,
    );
    const others = stack.slack
      .messages(channel)
      .filter((m) => m.ts !== ts && String(m.text).includes(`/gpu ${request}`))
      .map((m) => `"${String(m.text)}"`);
    return violated(
      `${opts.what} never ended where ${who.name} can see it; its channel message went ${history.join(', then ') || 'missing'}, and nothing final reached them privately${others.length > 0 ? ` (other messages about it: ${others.join(', ')})` : ''}`,
    );
  });
  // Exactly one outcome: never Done in one place and Failed in another.
  const ts = opts.channelTs();
  const seen = [
    ...(ts ? (stack.slack.message(channel, ts)?.history ?? []).map((v) => String(v.text)) : []),
    ...privateFinals(stack, who, request, opts.since, opts.responseUrl),
  ].filter((t) => /(^|\n)(Done|Failed):/.test(t));
  const phases = new Set(seen.map(phaseOf));
  if (phases.size > 1) {
    violated(
      `${opts.what} was answered both ways: ${[...new Set(seen)].map((t) => `"${t}"`).join(', then ')}`,
    );
  }
  return { text, phase: phaseOf(text) as 'Done' };
}

/**
 * The request's message in the channel: the latest that Slack took since `since` and that is still
 * there (a late "Waiting for approval" taken back, or replaced by the job's own message, is not).
 */
export const messageAbout =
  (stack: BotStack, request: string, since: number, channel = REQUEST_CHANNEL) =>
  (): string | undefined =>
    stack.slack.calls
      .filter(
        (c) =>
          c.index >= since &&
          c.method === 'chat.postMessage' &&
          c.body.channel === channel &&
          String(c.body.text).includes(`/gpu ${request}`) &&
          (c.response as { ok?: boolean } | undefined)?.ok === true,
      )
      .map((c) => String((c.response as { ts: string }).ts))
      .filter((ts) => stack.slack.message(channel, ts) !== undefined)
      .at(-1);

/**
 * The first post about `/gpu <request>` in `channel` since `since` that Slack took, or refused for good
 * there (`not_in_channel`: the answer then goes privately); a rate-limited one is tried again, so it
 * is not it. Rejects when none comes within `timeoutMs`.
 */
export const postAbout = (
  stack: BotStack,
  request: string,
  since: number,
  channel: string,
  timeoutMs = 10_000,
) =>
  stack.slack.waitFor(
    'chat.postMessage',
    (c) =>
      c.body.channel === channel &&
      String(c.body.text).includes(`/gpu ${request}`) &&
      ((c.response as { ok?: boolean }).ok === true ||
        (c.response as { error?: string }).error === 'not_in_channel'),
    timeoutMs,
    since,
  );
