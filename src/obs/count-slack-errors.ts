import type { FetchFunction } from '@slack/web-api';

// The Slack SDK's WebClient takes a `fetch` of our choosing: this one passes every call through
// untouched and reports the failed ones (Slack's `ok: false` answers, HTTP errors, network failures)
// for gpuops_slack_api_errors_total. It reads a clone of the body, never the caller's copy.

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
    if (/\bjson\b/i.test(response.headers.get('content-type') ?? '') && 'clone' in response) {
      try {
        const body = (await (response as Response).clone().json()) as { ok?: unknown; error?: unknown };
        if (body.ok === false) report(method, typeof body.error === 'string' ? body.error : 'unknown');
      } catch {
        // Not ours to judge: the SDK reads the body itself and reports what it finds.
      }
    }
    return response;
  };
}
