// Spans of one request's trace (docs/operations.md, "Traces"). Tracing is off unless
// OTEL_EXPORTER_OTLP_ENDPOINT is set; then the composition root (src/app/tracing.ts) loads the
// OpenTelemetry SDK and installs a runner here. Off, every helper below is one check of an unset
// variable and a direct call: no SDK is loaded and the acknowledgement path does no extra work.
// A process runs one bot, and OpenTelemetry's context is process-wide too: hence one runner.

/** What a span may carry: ids, kinds, outcomes, statuses. Never a token, a typed argument or a form value. */
export type SpanValue = string | number | boolean;
export type SpanAttributes = Readonly<Record<string, SpanValue | undefined>>;

/** server: a request Slack sent us; client: a call we make; internal: a step in between. */
export type SpanKindName = 'server' | 'client' | 'internal';

/** Adds attributes to the span it was handed, once their values are known (an outcome, a status). */
export interface SpanNote {
  set(attributes: SpanAttributes): void;
}

export interface SpanRunner {
  /** Runs `fn` inside a new span, a child of the current one; the span ends when `fn` settles. */
  inSpan<T>(
    name: string,
    kind: SpanKindName,
    attributes: SpanAttributes,
    fn: (span: SpanNote) => Promise<T>,
  ): Promise<T>;
  /** Records a span that is already over (a call reported once it ended), a child of the current one. */
  ended(
    name: string,
    kind: SpanKindName,
    attributes: SpanAttributes,
    startedAt: number,
    endedAt: number,
  ): void;
}

const NO_NOTE: SpanNote = { set: () => {} };
let runner: SpanRunner | undefined;

/** Installs (or, with undefined, removes) the runner: the composition root only. */
export function useSpanRunner(next: SpanRunner | undefined): void {
  runner = next;
}

export function tracingOn(): boolean {
  return runner !== undefined;
}

/** `fn` in a span when tracing is on; else just `fn`. */
export function inSpan<T>(
  name: string,
  attributes: SpanAttributes,
  fn: (span: SpanNote) => Promise<T>,
  kind: SpanKindName = 'internal',
): Promise<T> {
  return runner ? runner.inSpan(name, kind, attributes, fn) : fn(NO_NOTE);
}

/** A span for something that already happened (start and end in epoch ms), when tracing is on. */
export function spanEnded(
  name: string,
  attributes: SpanAttributes,
  startedAt: number,
  endedAt: number,
  kind: SpanKindName = 'client',
): void {
  runner?.ended(name, kind, attributes, startedAt, endedAt);
}
