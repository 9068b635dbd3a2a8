// A post to a Slack response_url, which reaches the person wherever the command was typed or the
// button pressed, bot member or not (chat.postEphemeral fails where the bot is not a member).

/** Posts `body` to a response_url; throws when Slack refuses it (expired after 30 minutes or 5 uses). */
export async function postToResponseUrl(url: string, body: Record<string, unknown>): Promise<void> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  await res.body?.cancel();
  if (!res.ok) throw new Error(`the response_url answered ${res.status}`);
}
