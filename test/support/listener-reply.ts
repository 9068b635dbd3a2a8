import type { SignedResponse } from './slack-driver.js';

// The listener's own answer to a slash command (the body of its acknowledgement), read so that a test
// expecting one and not getting it fails saying what the person saw instead, never with a JSON error.

export interface ListenerReply {
  readonly response_type?: string;
  readonly text?: string;
  readonly blocks?: unknown[];
}

/**
 * Parses the acknowledgement of `/gpu <request>`. `seen` lists what reached the person otherwise
 * (channel messages, ephemerals) since the request, for the failure message.
 */
export async function listenerReply(
  request: string,
  response: SignedResponse,
  seen: () => Promise<readonly string[]>,
): Promise<ListenerReply> {
  const instead = async () => {
    const shown = await seen();
    return shown.length > 0
      ? ` What the person saw instead: ${shown.map((s) => `"${s}"`).join(', then ')}.`
      : ' Nothing else reached the person either.';
  };
  if (response.status !== 200) {
    throw new Error(
      `"/gpu ${request}" got HTTP ${response.status} from the listener, so Slack showed the person an error instead of an answer.${await instead()}`,
    );
  }
  if (response.text.trim() === '') {
    throw new Error(
      `"/gpu ${request}" was acknowledged without an answer of the listener's own (as a request that goes straight to the queue is), where one was expected.${await instead()}`,
    );
  }
  try {
    return JSON.parse(response.text) as ListenerReply;
  } catch {
    throw new Error(
      `"/gpu ${request}" was answered with text Slack cannot show: ${response.text.slice(0, 200)}.${await instead()}`,
    );
  }
}
