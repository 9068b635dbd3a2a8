import type { Attributes, Span, SpanKind, Tracer } from '@opentelemetry/api';
import type { Telemetry } from 'bullmq';
import type { Config } from '../config.js';
import type { Logger } from '../log/logger.js';
import {
  type SpanAttributes,
  type SpanKindName,
  type SpanNote,
  type SpanRunner,
  useSpanRunner,
} from '../obs/trace-spans.js';

// OpenTelemetry, only when OTEL_EXPORTER_OTLP_ENDPOINT is set: the SDK is imported here, at start-up,
// and nowhere else, so a bot without it never loads it. It installs the span runner of
// src/obs/trace-spans.ts and gives the request queue and worker BullMQ's telemetry (bullmq-otel),
// which carries the trace across Redis in each job's options (a W3C traceparent, nothing else).
// Spans go to <endpoint>/v1/traces as OTLP/HTTP JSON, in batches. docs/operations.md, "Traces".

export interface Tracing {
  /** For the request queue and its worker: BullMQ's own spans, linked across the queue. */
  readonly telemetry: Telemetry;
  /** Sends the spans still buffered and turns tracing off. */
  shutdown(): Promise<void>;
}

/** BullMQ attributes that quote a job's result or error text (names the person typed): never exported. */
const JOB_TEXT = new Set(['bullmq.job.result', 'bullmq.job.failed.reason']);

/** `a=1,b=x%20y` as OTEL_EXPORTER_OTLP_HEADERS writes them (values percent-encoded). */
export function parseOtlpHeaders(raw: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (raw ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    const value = pair.slice(at + 1).trim();
    let decoded = value;
    try {
      decoded = decodeURIComponent(value);
    } catch {}
    headers[pair.slice(0, at).trim()] = decoded;
  }
  return headers;
}

export function tracesUrlOf(endpoint: string): string {
  return `${endpoint.replace(/\/+$/, '')}/v1/traces`;
}

function cleanAttributes(attributes: SpanAttributes): Attributes {
  const out: Attributes = {};
  for (const [k, v] of Object.entries(attributes)) if (v !== undefined) out[k] = v;
  return out;
}

/** What an error is, never what it says: messages can quote a name or a value someone typed. */
function errorType(err: unknown): string {
  if (err && typeof err === 'object') {
    const code = (err as { code?: unknown }).code;
    const name = (err as { name?: unknown }).name;
    if (typeof code === 'string' && /^[\w.-]{1,64}$/.test(code)) return code;
    if (typeof name === 'string') return name;
  }
  return 'unknown';
}

// OpenTelemetry's provider, context and propagator are the process's: a second bot in one process (a
// test's extra worker) shares the first one's, and the last of them to stop shuts it down.
let shared: { readonly tracing: Promise<Tracing>; users: number } | undefined;

export async function startTracing(config: Config, log: Logger): Promise<Tracing | undefined> {
  if (!config.OTEL_EXPORTER_OTLP_ENDPOINT) return undefined;
  const started = shared ?? {
    tracing: openTracing(config, config.OTEL_EXPORTER_OTLP_ENDPOINT, log),
    users: 0,
  };
  shared = started;
  started.users += 1;
  let tracing: Tracing;
  try {
    tracing = await started.tracing;
  } catch (err) {
    if (shared === started) shared = undefined;
    throw err;
  }
  let stopped = false;
  return {
    telemetry: tracing.telemetry,
    async shutdown() {
      if (stopped) return;
      stopped = true;
      started.users -= 1;
      if (started.users > 0) return;
      if (shared === started) shared = undefined;
      await tracing.shutdown();
    },
  };
}

async function openTracing(config: Config, endpoint: string, log: Logger): Promise<Tracing> {
  const [api, sdk, otlp, resources, bullmqOtel] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('bullmq-otel'),
  ]);
  const exporter = new otlp.OTLPTraceExporter({
    url: tracesUrlOf(endpoint),
    headers: parseOtlpHeaders(config.OTEL_EXPORTER_OTLP_HEADERS),
  });
  const provider = new sdk.NodeTracerProvider({
    resource: resources.resourceFromAttributes({ 'service.name': config.OTEL_SERVICE_NAME }),
    spanProcessors: [new sdk.BatchSpanProcessor(exporter)],
  });
  // The AsyncLocalStorage context (a span's children are found across awaits) and the W3C
  // traceparent propagator that bullmq-otel writes into each job.
  provider.register();
  const tracer: Tracer = provider.getTracer('gpuops');
  const kinds: Record<SpanKindName, SpanKind> = {
    server: api.SpanKind.SERVER,
    client: api.SpanKind.CLIENT,
    internal: api.SpanKind.INTERNAL,
  };
  const noteOf = (span: Span): SpanNote => ({ set: (a) => span.setAttributes(cleanAttributes(a)) });
  const runner: SpanRunner = {
    inSpan(name, kind, attributes, fn) {
      return tracer.startActiveSpan(
        name,
        { kind: kinds[kind], attributes: cleanAttributes(attributes) },
        async (span) => {
          try {
            return await fn(noteOf(span));
          } catch (err) {
            span.setAttribute('error.type', errorType(err));
            span.setStatus({ code: api.SpanStatusCode.ERROR });
            throw err;
          } finally {
            span.end();
          }
        },
      );
    },
    ended(name, kind, attributes, startedAt, endedAt) {
      tracer
        .startSpan(name, { kind: kinds[kind], attributes: cleanAttributes(attributes), startTime: startedAt })
        .end(endedAt);
    },
  };
  useSpanRunner(runner);
  const telemetry = withoutJobText(new bullmqOtel.BullMQOtel({ tracerName: 'bullmq' }));
  log.info({ service: config.OTEL_SERVICE_NAME }, 'traces on: spans are exported over OTLP/HTTP');
  return {
    telemetry,
    async shutdown() {
      useSpanRunner(undefined);
      await provider.shutdown().catch((err: unknown) => log.warn({ err }, 'could not send the last spans'));
      api.trace.disable();
      api.context.disable();
      api.propagation.disable();
    },
  };
}

/** BullMQ's telemetry without the job's result, failure text or exception message in any span. */
function withoutJobText(inner: Telemetry): Telemetry {
  return {
    contextManager: inner.contextManager,
    tracer: {
      startSpan(name, options, context) {
        const span = inner.tracer.startSpan(name, options, context);
        return {
          setSpanOnContext: (ctx) => span.setSpanOnContext(ctx),
          setAttribute: (key, value) => {
            if (!JOB_TEXT.has(key)) span.setAttribute(key, value);
          },
          setAttributes: (attributes) =>
            span.setAttributes(
              Object.fromEntries(Object.entries(attributes).filter(([k]) => !JOB_TEXT.has(k))),
            ),
          addEvent: (event, attributes) =>
            span.addEvent(
              event,
              attributes && Object.fromEntries(Object.entries(attributes).filter(([k]) => !JOB_TEXT.has(k))),
            ),
          recordException: (err, time) => span.recordException({ name: errorType(err), message: '' }, time),
          end: () => span.end(),
        };
      },
    },
  };
}
