// A post to a Slack response_url, which reaches the person wherever the command was typed or the
// button pressed, bot member or not (chat.postEphemeral fails where the bot is not a member).

/** Posts `body` to a response_url; resolves with the HTTP status (0: no answer within 10 s). */
export async function postResponseUrl(url: string, body: Record<string, unknown>): Promise<number> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    await res.body?.cancel();
    return res.status;
  } catch {
    return 0;
  }
}

/** Posts `body` to a response_url; throws when Slack refuses it (expired after 30 minutes or 5 uses). */
async function postToResponseUrl(url: string, body: Record<string, unknown>): Promise<void> {
  const status = await postResponseUrl(url, body);
  if (status < 200 || status >= 300) throw new Error(`the response_url answered ${status || 'nothing'}`);
}

/** Where a private answer goes: the person, and the response_url or conversation to reach them by. */
export interface PrivateAnswerTarget {
  readonly userId: string;
  readonly responseUrl?: string | undefined;
  readonly channelId?: string | undefined;
}

/** What a private answer is sent through: the Web API client for ephemerals, and the log. */
export interface PrivateAnswerDeps {
  readonly client: {
    chat: { postEphemeral(args: { channel: string; user: string; text: string }): Promise<unknown> };
  };
  readonly log: { warn(fields: object, msg: string): void };
}

/**
 * Answers one person privately: through the response_url when there is one (it works wherever the
 * command was typed or the button pressed), else an ephemeral in the conversation. Never throws: a
 * failure is logged as `what`.
 */
export async function tellPrivately(
  deps: PrivateAnswerDeps,
  target: PrivateAnswerTarget,
  text: string,
  what: string,
): Promise<void> {
  const answer = target.responseUrl
    ? postToResponseUrl(target.responseUrl, { response_type: 'ephemeral', replace_original: false, text })
    : target.channelId
      ? deps.client.chat.postEphemeral({ channel: target.channelId, user: target.userId, text })
      : Promise.resolve();
  await answer.catch((err: unknown) => deps.log.warn({ err }, what));
}

/**
 * Answers a button press privately: through the press's response_url (Bolt's `respond`), which reaches
 * the person wherever they pressed; should Slack no longer take it (expired, used up), an ephemeral in
 * the conversation they pressed in. Never throws: a failure of both is logged as `what`.
 */
export async function answerPress(
  deps: PrivateAnswerDeps,
  press: {
    readonly respond?: ((answer: Record<string, unknown>) => Promise<unknown>) | undefined;
    readonly userId: string;
    readonly channelId?: string | undefined;
  },
  text: string,
  what: string,
): Promise<void> {
  const told = press.respond
    ? await press.respond({ response_type: 'ephemeral', replace_original: false, text }).then(
        () => true,
        () => false,
      )
    : false;
  if (told) return;
  if (!press.channelId) deps.log.warn({}, what);
  else await tellPrivately(deps, { userId: press.userId, channelId: press.channelId }, text, what);
}
