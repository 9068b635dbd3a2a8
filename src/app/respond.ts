import { request } from 'undici';
import type { Logger } from '../log/logger.js';

/**
 * Answers on a Slack response_url (ephemeral replies replaced in place). A refused answer (the URL
 * expired after 30 minutes or 5 uses) is logged, not retried: sending it again cannot help.
 */
export async function respondTo(url: string, body: Record<string, unknown>, log: Logger): Promise<void> {
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  });
  await res.body.dump();
  if (res.statusCode >= 400) {
    log.warn({ status: res.statusCode }, 'Slack refused an answer on a response_url (expired or used up)');
  }
}
