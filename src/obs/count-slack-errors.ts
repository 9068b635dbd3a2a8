import type { FetchFunction } from '@slack/web-api';

// The Slack SDK's WebClient takes a `fetch` of our choosing: this one passes every call through
// untouched and reports the failed ones (Slack's `ok: false` answers, HTTP errors, network failures)
// for gpuops_slack_api_errors_total. It looks at the body the SDK reads (the SDK reads it once, as
// text): cloning the response instead would copy every body through a second stream.

export type SlackErrorSink = (method: string, error: string) => void;

/** `chat.postMessage` from …/api/chat.postMessage; the file upload URL and others become `file_upload`. */
export function slackMethodOf(url: string | URL): string {
  const path = new URL(String(url)).pathname;
  const last = path.slice(path.lastIndexOf('/') + 1);
  return /^[a-z]+(\.[A-Za-z]+)+$/.test(last) ? last : 'file_upload';
}

export function countSlackErrors(
  onError: SlackErrorSink,
  base: FetchFunction = globalThis.fetch,
): FetchFunction {
  const report = (method: string, error: string) => {
    try {
      onError(method, error);
    } catch {}
  };
  return async (url, init) => {
    const method = slackMethodOf(url);
    let response: Awaited<ReturnType<FetchFunction>>;
    try {
      response = await base(url, init);
    } catch (err) {
      report(method, init?.signal?.aborted ? 'timeout' : 'network');
      throw err;
    }
    if (response.status !== 200) {
      report(method, `http_${response.status}`);
      return response;
    }
    if (/\bjson\b/i.test(response.headers.get('content-type') ?? '') && 'text' in response) {
      return watchBody(response as Response, (body) => {
        // Only an error answer is parsed twice; a successful one is only searched.
        if (!/"ok"\s*:\s*false/.test(body)) return;
        try {
          const parsed = JSON.parse(body) as { ok?: unknown; error?: unknown };
          if (parsed.ok === false)
            report(method, typeof parsed.error === 'string' ? parsed.error : 'unknown');
        } catch {
          // Not ours to judge: the SDK reads the body itself and reports what it finds.
        }
      }) as Awaited<ReturnType<FetchFunction>>;
    }
    return response;
  };
}

/** The same response, whose text() also hands the body to `inspect` (every other member untouched). */
function watchBody(response: Response, inspect: (body: string) => void): Response {
  return new Proxy(response, {
    get(target, property) {
      if (property === 'text') {
        return async () => {
          const body = await target.text();
          inspect(body);
          return body;
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
