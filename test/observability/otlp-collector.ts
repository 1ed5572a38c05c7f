/**
 * A mock OTLP/HTTP trace collector: a real HTTP server on loopback taking POST /v1/traces, decoding each
 * ExportTraceServiceRequest (OTLP JSON: ids as hex, attributes as typed AnyValues) into flat spans.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

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
  const c: Collector = { url: '', spans: [], requests: 0, close: async () => {} };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (b: Buffer) => chunks.push(b));
    req.on('end', () => {
      c.requests++;
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).includes('application/json')) {
        res.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
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
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
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
