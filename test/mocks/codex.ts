/**
 * A mock of the ChatGPT Codex backend (`https://chatgpt.com/backend-api/codex`): `POST /responses` over
 * HTTP (Server-Sent Events only) and the same path as a WebSocket (`response.create` frames in, one JSON
 * frame per event out). What it enforces and sends is what the real backend and the Codex CLI show:
 *
 * - HTTP answers streams only: `stream` other than true is `400 {"detail":"Stream must be set to true"}`;
 *   `store` other than false `400 {"detail":"Store must be set to false"}`; no `instructions` field
 *   `400 {"detail":"Instructions are required"}` (the texts the backend answers; older backends required
 *   the field, Codex 0.169.0 sends none, so an empty string is what a client without one can send).
 * - The WebSocket handshake carries `OpenAI-Beta: responses_websockets=2026-02-06` (Codex CLI 0.169.0;
 *   codex-rs/codex-api/src/endpoint/responses_websocket.rs) and the bearer token; a refused handshake is an
 *   HTTP reply with its status and JSON body.
 * - An error before the response is a wrapped error frame, `{type: "error", status_code, error, headers}`
 *   (responses_websocket.rs, parse_wrapped_websocket_error_event), e.g. `usage_limit_reached` with
 *   `resets_at`; over HTTP the same error object is a 429 body (`{error: {...}}`).
 * - Several responses on one socket: `previous_response_id` names a response this socket served (the
 *   backend keeps it on the socket, `store: false`); an unknown id is an error frame (400).
 *
 * Events are the OpenAI Responses stream the shared mock renders (formats/openai-responses.ts).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { openaiResponses } from './formats/openai-responses.js';
import { mockId, nowSeconds, planReply } from './reply.js';
import type { ContentBehavior, MockRequest } from './types.js';

/** What the next response does (consumed in order from `mock.script`; the default is a text reply). */
export type CodexBehavior =
  | ContentBehavior
  | { type: 'usage-limit'; resetsInSeconds: number; plan?: string; legacy?: boolean }
  /** Sends this many events of the reply, then closes the socket (WebSocket) or the connection (HTTP). */
  | { type: 'cut'; after: number }
  /** The WebSocket handshake is refused with this status and a JSON error body. */
  | { type: 'refuse-upgrade'; status: number };

export interface CodexRequest {
  transport: 'http' | 'websocket';
  /** Lower-cased headers of the HTTP request, or of the WebSocket handshake. */
  headers: Record<string, string>;
  json: any;
  /** Which socket the frame came on (1, 2, ... in the order they opened); 0 for HTTP. */
  socket: number;
}

export interface CodexMock {
  /** The base URL to give a codex connection (`oauthEndpoints.codex.apiBaseUrl`). */
  baseUrl: string;
  /** Behaviors of the next responses, consumed first to last. */
  script: CodexBehavior[];
  /** Every response asked for (HTTP requests to /responses and response.create frames), in order. */
  requests: CodexRequest[];
  /** Handshake headers of each WebSocket accepted or refused, in order. */
  upgrades: Record<string, string>[];
  /** WebSockets open now. */
  openSockets(): number;
  reset(): void;
  close(): Promise<void>;
}

const PATH = '/backend-api/codex/responses';
const WS_BETA = 'responses_websockets=2026-02-06';

function lower(headers: IncomingMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** The Responses events of a reply, as JSON objects (the shared mock renders them as SSE frames). */
function replyEvents(json: any, behavior: ContentBehavior, index: number): any[] {
  const body = JSON.stringify(json);
  const req = { index, method: 'POST', path: PATH, query: {}, headers: {}, body, json, bytes: Buffer.from(body), endpoint: 'openai.responses', provider: 'openai', model: json.model, stream: true } as MockRequest;
  const ctx = { req, reply: planReply(behavior, req, 'Hello from the Codex mock.'), model: String(json.model ?? 'gpt-5'), id: mockId(req), created: nowSeconds() };
  return openaiResponses.stream(ctx).map((frame) => JSON.parse(frame.slice(frame.indexOf('data: ') + 6)));
}

function usageLimitError(b: { resetsInSeconds: number; plan?: string; legacy?: boolean }) {
  return {
    type: 'usage_limit_reached',
    message: 'The usage limit has been reached',
    plan_type: b.plan ?? 'plus',
    // The current shape (responses_websocket.rs test): an epoch `resets_at`; older backends sent `resets_in_seconds`.
    ...(b.legacy ? { resets_in_seconds: b.resetsInSeconds } : { resets_at: Math.floor(Date.now() / 1000) + b.resetsInSeconds }),
  };
}

const RATE_HEADERS = { 'x-codex-primary-used-percent': '100.0', 'x-codex-primary-window-minutes': '300' };

export async function startCodexMock(): Promise<CodexMock> {
  const sockets = new Set<Socket>();
  const script: CodexBehavior[] = [];
  const requests: CodexRequest[] = [];
  const upgrades: Record<string, string>[] = [];
  let socketCount = 0;
  let index = 0;
  const next = (): CodexBehavior => script.shift() ?? { type: 'text' };

  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const headers = lower(req.headers);
      const send = (status: number, body: unknown, extra: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...extra });
        res.end(JSON.stringify(body));
      };
      if (req.method !== 'POST' || req.url?.split('?')[0] !== PATH) return send(404, { detail: 'Not Found' });
      let json: any;
      try {
        json = JSON.parse(Buffer.concat(parts).toString('utf8'));
      } catch {
        return send(400, { detail: 'Invalid JSON' });
      }
      requests.push({ transport: 'http', headers, json, socket: 0 });
      if (!headers.authorization?.startsWith('Bearer ')) return send(401, { detail: 'Unauthorized' });
      if (json.instructions === undefined) return send(400, { detail: 'Instructions are required' });
      if (json.store !== false) return send(400, { detail: 'Store must be set to false' });
      if (json.stream !== true) return send(400, { detail: 'Stream must be set to true' });
      const b = next();
      if (b.type === 'usage-limit') return send(429, { error: usageLimitError(b) }, RATE_HEADERS);
      const events = replyEvents(json, b.type === 'cut' || b.type === 'refuse-upgrade' ? { type: 'text' } : b, index++);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const upTo = b.type === 'cut' ? b.after : events.length;
      for (const e of events.slice(0, upTo)) res.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
      if (b.type === 'cut') res.socket?.destroy();
      else res.end();
    });
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  server.on('upgrade', (req, socket: Socket, head) => {
    const headers = lower(req.headers);
    upgrades.push(headers);
    const refuse = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      socket.end(`HTTP/1.1 ${status} Refused\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`);
    };
    if (req.url?.split('?')[0] !== PATH) return refuse(404, { detail: 'Not Found' });
    if (!headers.authorization?.startsWith('Bearer ')) return refuse(401, { detail: 'Unauthorized' });
    if (!String(headers['openai-beta'] ?? '').includes(WS_BETA)) return refuse(400, { detail: 'WebSocket mode requires the OpenAI-Beta header' });
    const first = script[0];
    if (first?.type === 'refuse-upgrade') {
      script.shift();
      return refuse(first.status, { error: { message: 'Your authentication token has expired. Please try signing in again.', type: 'invalid_request_error', code: 'token_expired' } });
    }
    wss.handleUpgrade(req, socket, head, (ws) => serveSocket(ws, headers, ++socketCount));
  });

  function serveSocket(ws: WebSocket, headers: Record<string, string>, id: number): void {
    /** Responses this socket served, for previous_response_id. */
    const served = new Set<string>();
    ws.on('message', (data) => {
      let json: any;
      try {
        json = JSON.parse(String(data));
      } catch {
        return ws.send(JSON.stringify({ type: 'error', status_code: 400, error: { type: 'invalid_request_error', message: 'Invalid JSON' } }));
      }
      requests.push({ transport: 'websocket', headers, json, socket: id });
      if (json.type !== 'response.create') {
        return ws.send(JSON.stringify({ type: 'error', status_code: 400, error: { type: 'invalid_request_error', message: `Unknown type ${json.type}` } }));
      }
      const prev = json.previous_response_id;
      if (typeof prev === 'string' && !served.has(prev)) {
        const error = { type: 'invalid_request_error', code: 'previous_response_not_found', message: `Previous response with id '${prev}' not found.`, param: 'previous_response_id' };
        return ws.send(JSON.stringify({ type: 'error', status_code: 400, error }));
      }
      const b = next();
      if (b.type === 'usage-limit') return ws.send(JSON.stringify({ type: 'error', status_code: 429, error: usageLimitError(b), headers: RATE_HEADERS }));
      const { type: _t, ...body } = json;
      const events = replyEvents(body, b.type === 'cut' || b.type === 'refuse-upgrade' ? { type: 'text' } : b, index++);
      const upTo = b.type === 'cut' ? b.after : events.length;
      for (const e of events.slice(0, upTo)) ws.send(JSON.stringify(e));
      if (b.type === 'cut') return ws.terminate();
      const done = events.at(-1);
      if (typeof done?.response?.id === 'string') served.add(done.response.id);
    });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/backend-api/codex`,
    script,
    requests,
    upgrades,
    openSockets: () => wss.clients.size,
    reset() {
      script.length = 0;
      requests.length = 0;
      upgrades.length = 0;
      for (const c of wss.clients) c.terminate();
    },
    async close() {
      for (const c of wss.clients) c.terminate();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
