import type { FetchFunction } from '@slack/web-api';
import { slackMethodOf } from './count-slack-errors.js';
import { inSpan } from './trace-spans.js';

// With tracing on, every Slack Web API call is a client span `gpuops.slack.api <method>` under the
// span that made it (a request's listener, a job's step or its answer). Only the method, the HTTP
// status and Slack's error code (`not_in_channel`, `ratelimited`…) go on it: the body carries the
// token, messages and form values. To read the error code within the span, a JSON answer's text is
// read here and handed to the SDK from memory (tracing on only).

/** Slack's error code in an `ok: false` answer, else undefined. */
function slackErrorOf(body: string): string | undefined {
  if (!/"ok"\s*:\s*false/.test(body)) return undefined;
  try {
    const parsed = JSON.parse(body) as { ok?: unknown; error?: unknown };
    if (parsed.ok !== false) return undefined;
    return typeof parsed.error === 'string' && /^[\w.-]{1,64}$/.test(parsed.error) ? parsed.error : 'unknown';
  } catch {
    return undefined;
  }
}

type SlackResponse = Awaited<ReturnType<FetchFunction>>;

/** The same response, whose body (already read) comes from `body`. */
function alreadyRead(response: SlackResponse, body: string): SlackResponse {
  return new Proxy(response, {
    get(target, property) {
      if (property === 'text') return async () => body;
      if (property === 'json') return async () => JSON.parse(body) as unknown;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

export function traceSlackCalls(base: FetchFunction): FetchFunction {
  return (url, init) => {
    const method = slackMethodOf(url);
    return inSpan(
      `gpuops.slack.api ${method}`,
      { 'slack.method': method },
      async (span) => {
        const response = await base(url, init);
        span.set({ 'http.response.status_code': response.status });
        if (response.status !== 200 || !/\bjson\b/i.test(response.headers.get('content-type') ?? ''))
          return response;
        const body = await response.text();
        const error = slackErrorOf(body);
        if (error) span.set({ 'slack.error': error, 'error.type': error });
        return alreadyRead(response, body);
      },
      'client',
    );
  };
}
