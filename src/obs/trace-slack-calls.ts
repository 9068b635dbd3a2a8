import type { FetchFunction } from '@slack/web-api';
import { slackMethodOf } from './count-slack-errors.js';
import { inSpan } from './trace-spans.js';

// With tracing on, every Slack Web API call is a client span `gpuops.slack.api <method>` under the
// span that made it (a request's listener, a job's step or its answer). Only the method and the HTTP
// status go on it: the body carries the token, messages and form values.

export function traceSlackCalls(base: FetchFunction): FetchFunction {
  return (url, init) => {
    const method = slackMethodOf(url);
    return inSpan(
      `gpuops.slack.api ${method}`,
      { 'slack.method': method },
      async (span) => {
        const response = await base(url, init);
        span.set({ 'http.response.status_code': response.status });
        return response;
      },
      'client',
    );
  };
}
