import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

// A small OpenTelemetry collector: POST /v1/traces with OTLP/HTTP JSON bodies (what the exporter
// gpuops uses sends), flattened into one list of spans. Anything else it is sent is kept in
// `unexpected` for the test to fail on, with what it was.

export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly name: string;
  readonly kind: number;
  readonly attributes: Readonly<Record<string, unknown>>;
  /** Every attribute value of the span, its events and its resource, as text: to look for secrets. */
  readonly allValues: readonly string[];
  readonly resource: Readonly<Record<string, unknown>>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: OtlpValue[] };
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttribute[];
  events?: Array<{ name: string; attributes?: OtlpAttribute[] }>;
  status?: { message?: string };
}
interface OtlpBody {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: Array<{ spans?: OtlpSpan[] }>;
  }>;
}

function otlpValue(v: OtlpValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(otlpValue);
  return undefined;
}

const attributesOf = (list: OtlpAttribute[] | undefined): Record<string, unknown> =>
  Object.fromEntries((list ?? []).map((a) => [a.key, otlpValue(a.value)]));

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly unexpected: string[] = [];
  /** The headers of every export request. */
  readonly headers: IncomingHttpHeaders[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<OtlpReceiver> {
    let receiver: OtlpReceiver | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/traces') {
          receiver?.unexpected.push(`${req.method} ${req.url}`);
          res.writeHead(404).end();
          return;
        }
        try {
          let raw = Buffer.concat(chunks);
          if (req.headers['content-encoding'] === 'gzip') raw = gunzipSync(raw);
          if (!String(req.headers['content-type']).includes('json'))
            throw new Error(`content-type ${req.headers['content-type']}`);
          receiver?.headers.push(req.headers);
          receiver?.take(JSON.parse(raw.toString('utf8')) as OtlpBody);
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } catch (err) {
          receiver?.unexpected.push(`POST /v1/traces: ${(err as Error).message}`);
          res.writeHead(400).end();
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    receiver = new OtlpReceiver(server, `http://127.0.0.1:${port}`);
    return receiver;
  }

  private take(body: OtlpBody): void {
    for (const rs of body.resourceSpans ?? []) {
      const resource = attributesOf(rs.resource?.attributes);
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          const attributes = attributesOf(s.attributes);
          const eventValues = (s.events ?? []).flatMap((e) => [
            e.name,
            ...Object.values(attributesOf(e.attributes)),
          ]);
          this.spans.push({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId || undefined,
            name: s.name,
            kind: s.kind,
            attributes,
            resource,
            allValues: [
              ...Object.values(attributes),
              ...eventValues,
              ...Object.values(resource),
              s.status?.message ?? '',
            ].map((v) => (typeof v === 'string' ? v : JSON.stringify(v))),
          });
        }
      }
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
