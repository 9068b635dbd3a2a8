import { WebClient } from '@slack/web-api';
import type { Config } from '../config.js';
import { redactText } from '../log/logger.js';
import { StartError, within } from './lifecycle.js';

// Slack answers a token it will not take with one of these codes: the start stops with a sentence
// saying which token and where to find the right one.
export const TOKEN_REFUSED = new Set([
  'invalid_auth',
  'not_authed',
  'token_revoked',
  'token_expired',
  'account_inactive',
  'not_allowed_token_type',
]);

/** auth.test once, with no retries: a wrong token stops the start with a sentence saying which. */
export async function checkBotToken(
  config: Config,
  timeoutMs: number,
): Promise<{
  botUserId: string;
  botId: string | undefined;
  teamId: string | undefined;
  enterpriseId: string | undefined;
}> {
  const probe = new WebClient(config.SLACK_BOT_TOKEN, {
    slackApiUrl: config.SLACK_API_URL,
    retryConfig: { retries: 0 },
    timeout: timeoutMs,
  });
  try {
    const res = await within(
      probe.auth.test(),
      timeoutMs + 1_000,
      () => new Error(`no answer within ${timeoutMs} ms`),
    );
    if (!res.user_id) throw new StartError('Slack auth.test gave no user id for SLACK_BOT_TOKEN.');
    // The bot's workspace (none for an org-wide install) and organisation: requests from any other
    // workspace are refused unless the policy allows them (src/policy/workspace-access.ts).
    return {
      botUserId: res.user_id,
      botId: res.bot_id,
      teamId: res.team_id,
      enterpriseId: res.enterprise_id,
    };
  } catch (err) {
    if (err instanceof StartError) throw err;
    const code = (err as { data?: { error?: string } }).data?.error;
    if (code && TOKEN_REFUSED.has(code)) {
      throw new StartError(
        `Slack refused SLACK_BOT_TOKEN (${code}): copy the Bot User OAuth Token (xoxb-…) from the Slack app's OAuth & Permissions page.`,
        err,
      );
    }
    if (code) throw new StartError(`Slack answered auth.test with "${code}" for SLACK_BOT_TOKEN.`, err);
    const why = redactText((err as Error)?.message ?? String(err));
    throw new StartError(
      `Could not reach the Slack Web API at ${config.SLACK_API_URL} (${why}): check SLACK_API_URL and the network.`,
      err,
    );
  }
}
