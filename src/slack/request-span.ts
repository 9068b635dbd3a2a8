import type { AnyMiddlewareArgs, Middleware } from '@slack/bolt';
import { inSpan, type SpanAttributes } from '../obs/trace-spans.js';

// The root span of a request's trace: one per payload Slack delivers, around every listener that
// runs for it (the access gate, the acknowledgement, the posts after it). Registered only with
// tracing on (docs/operations.md, "Traces"). Its attributes say what kind of payload it was and
// which of our own ids it names (callback and action ids); never text, values or who sent it.

interface Payload {
  readonly type?: unknown;
  readonly command?: unknown;
  readonly actions?: ReadonlyArray<{ readonly action_id?: unknown }>;
  readonly view?: { readonly callback_id?: unknown };
  readonly event?: { readonly type?: unknown; readonly function?: { readonly callback_id?: unknown } };
}

const asText = (v: unknown): string | undefined => (typeof v === 'string' ? v.slice(0, 100) : undefined);

/** The span's name and attributes for one payload. */
export function requestSpanOf(body: Payload): { name: string; attributes: SpanAttributes } {
  if (typeof body.command === 'string') {
    return { name: 'gpuops.slack.command', attributes: { 'slack.command': asText(body.command) } };
  }
  if (body.type === 'block_actions') {
    return {
      name: 'gpuops.slack.action',
      attributes: { 'slack.action_id': asText(body.actions?.[0]?.action_id) },
    };
  }
  if (body.type === 'view_submission' || body.type === 'view_closed') {
    return {
      name: 'gpuops.slack.submission',
      attributes: { 'slack.type': body.type, 'slack.callback_id': asText(body.view?.callback_id) },
    };
  }
  const event = asText(body.event?.type);
  if (event === 'function_executed') {
    return {
      name: 'gpuops.slack.step',
      attributes: { 'slack.callback_id': asText(body.event?.function?.callback_id) },
    };
  }
  if (event === 'app_home_opened') return { name: 'gpuops.slack.home', attributes: {} };
  return {
    name: 'gpuops.slack.event',
    attributes: { 'slack.type': asText(body.type), 'slack.event': event },
  };
}

export const requestSpan: Middleware<AnyMiddlewareArgs> = async ({ body, next }) => {
  const { name, attributes } = requestSpanOf(body as Payload);
  await inSpan(name, attributes, () => next(), 'server');
};
