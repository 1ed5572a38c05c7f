/**
 * A mock OTLP/HTTP trace collector: a real HTTP server on loopback taking POST /v1/traces, decoding each
 * ExportTraceServiceRequest into flat spans. Protobuf bodies (`application/x-protobuf`, the OTLP default) are
 * decoded with the official generated OTLP classes (`@opentelemetry/otlp-transformer` 0.52, the last
 * release that ships them, installed as `otlp-proto-decoder`); JSON bodies (`http/json`) are read as the
 * OTLP JSON mapping (ids as hex, attributes as typed AnyValues).
 */
import { createRequire } from 'node:module';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

const require = createRequire(import.meta.url);
// The official generated protobuf classes of the OTLP protos (protobufjs static code).
const otlp = require('otlp-proto-decoder/build/src/generated/root.js').opentelemetry.proto;

/** A protobuf-decoded request in the shape of the OTLP JSON mapping (ids hex, 64-bit numbers as strings). */
function fromProtobuf(body: Buffer): any {
  const message = otlp.collector.trace.v1.ExportTraceServiceRequest.decode(body);
  const object = otlp.collector.trace.v1.ExportTraceServiceRequest.toObject(message, { longs: String, bytes: Buffer, defaults: false, arrays: true });
  const hex = (b: Buffer | undefined) => (b && b.length ? Buffer.from(b).toString('hex') : undefined);
  for (const rs of object.resourceSpans ?? []) {
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        s.traceId = hex(s.traceId);
        s.spanId = hex(s.spanId);
        s.parentSpanId = hex(s.parentSpanId);
      }
    }
  }
  return object;
}

export interface CollectedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  startMs: number;
  endMs: number;
  status: { code?: number; message?: string };
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
}

export interface Collector {
  url: string;
  spans: CollectedSpan[];
  requests: number;
  /** The encoding of each export received: `protobuf` or `json`. */
  encodings: string[];
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean; arrayValue?: { values?: AnyValue[] } };

function value(v: AnyValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(value);
  return undefined;
}

function attributes(list: Array<{ key: string; value: AnyValue }> | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, value(a.value)]));
}

const nanosToMs = (n: string | number) => Number(BigInt(n) / 1000n) / 1000;

export async function startCollector(): Promise<Collector> {
  const c: Collector = { url: '', spans: [], requests: 0, encodings: [], close: async () => {} };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (b: Buffer) => chunks.push(b));
    req.on('end', () => {
      c.requests++;
      const type = String(req.headers['content-type']);
      const protobuf = type.includes('application/x-protobuf');
      if (req.method !== 'POST' || req.url !== '/v1/traces' || (!protobuf && !type.includes('application/json'))) {
        res.writeHead(415).end();
        return;
      }
      c.encodings.push(protobuf ? 'protobuf' : 'json');
      const raw = Buffer.concat(chunks);
      const body = protobuf ? fromProtobuf(raw) : JSON.parse(raw.toString('utf8'));
      for (const rs of body.resourceSpans ?? []) {
        const resource = attributes(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            c.spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId || undefined,
              name: s.name,
              kind: s.kind,
              startMs: nanosToMs(s.startTimeUnixNano),
              endMs: nanosToMs(s.endTimeUnixNano),
              status: s.status ?? {},
              attributes: attributes(s.attributes),
              resource,
            });
          }
        }
      }
      if (protobuf) res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  c.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  c.close = () => new Promise<void>((r) => {
    server.closeAllConnections();
    server.close(() => r());
  });
  return c;
}
