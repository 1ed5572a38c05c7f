/**
 * The Responses WebSocket transport (`GET /v1/responses` with `Upgrade: websocket`), on crossws's Node
 * adapter: the route (routes.ts) authorizes the upgrade like any client request (the API key from the
 * `Authorization` header, key scopes, the WebSocket Origin rule), then the socket is handed here and each
 * connection gets a {@link ResponsesSession}.
 *
 * Limits (docs/responses-websocket.md): a client frame is at most the client body limit
 * (`maxRequestBodyBytes`, 32 MiB by default; larger is closed with 1009); a socket with no response in
 * progress and no frame either way for `responsesSocketIdleMs` (10 minutes by default) is closed with 1000
 * "idle timeout"; a peer that stops
 * answering pings is dropped after 30 to 60 s; at most {@link MAX_SOCKETS} sockets are open (503 at upgrade).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import nodeAdapter from 'crossws/adapters/node';
import type { AuthInfo } from '../auth/pipeline.js';
import { ResponsesSession, type ResponsesSocketDeps } from './session.js';

/** Open Responses sockets at most. */
export const MAX_SOCKETS = 256;
/** The hard frame cap given to the WebSocket parser; the setting's limit is checked per message below it. */
const HARD_MAX_PAYLOAD = 256 * 1024 * 1024;

interface Conn {
  session: ResponsesSession;
  idle?: NodeJS.Timeout;
  /** When the last frame went either way (ms). */
  last: number;
}

/** What the upgrade route hands over: who the caller is and the headers of the upgrade request. */
export interface ResponsesUpgrade {
  auth: AuthInfo;
  headers: Headers;
}

export class ResponsesSocketServer {
  private readonly conns = new Map<string, Conn>();
  private closed = false;
  private readonly ws;
  constructor(private readonly services: ResponsesSocketDeps) {
    this.ws = nodeAdapter({
      serverOptions: { maxPayload: HARD_MAX_PAYLOAD, perMessageDeflate: false },
      hooks: {
        upgrade: (request) => {
          const ctx = (request as Request & { _responses?: ResponsesUpgrade })._responses;
          if (!ctx) return new Response('not authorized', { status: 403 });
          return { context: { responses: ctx }, headers: { 'x-router-version': this.services.version } };
        },
        open: (peer) => {
          const up = peer.context.responses as ResponsesUpgrade;
          const session = new ResponsesSession(this.services, up.auth, up.headers, {
            send: (text) => {
              conn.last = Date.now();
              peer.send(text);
            },
            close: (code, reason) => peer.close(code, reason),
            buffered: () => peer.bufferedAmount,
          });
          const conn: Conn = { session, last: Date.now() };
          this.conns.set(peer.id, conn);
          this.watchIdle(conn, () => peer.close(1000, 'idle timeout'));
        },
        message: (peer, message) => {
          const conn = this.conns.get(peer.id);
          if (!conn) return;
          const data = message.rawData as Buffer | string;
          const size = typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength;
          if (size > this.services.settings.get().maxRequestBodyBytes) return peer.close(1009, 'message too big');
          if (typeof data !== 'string') return peer.close(1003, 'text frames only');
          conn.last = Date.now();
          conn.session.receive(data);
        },
        close: (peer) => this.drop(peer.id),
        error: (peer) => this.drop(peer.id),
      },
    });
  }

  /** True while a new socket may be accepted. */
  get accepting(): boolean {
    return !this.closed && this.conns.size < MAX_SOCKETS;
  }

  get size(): number {
    return this.conns.size;
  }

  /** Completes the handshake of an upgrade the route authorized. */
  accept(req: IncomingMessage, socket: Duplex, head: Buffer, upgrade: ResponsesUpgrade): void {
    if (!this.accepting) {
      socket.destroy();
      return;
    }
    const request = new Request(new URL(req.url ?? '/', 'http://router.invalid'), { headers: upgrade.headers });
    (request as Request & { _responses?: ResponsesUpgrade })._responses = upgrade;
    void this.ws.handleUpgrade(req, socket, head, request).catch(() => socket.destroy());
  }

  /** Closes every socket (1001 going away); further upgrades are refused. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.ws.closeAll(1001, 'server shutting down', false);
    for (const id of [...this.conns.keys()]) this.drop(id);
    setTimeout(() => this.ws.closeAll(1001, 'server shutting down', true), 1_000).unref();
  }

  /**
   * Closes the socket once it has been idle for `responsesSocketIdleMs`: no response in progress and no
   * frame either way. Frames only stamp {@link Conn.last}; the one timer re-arms for the time left, so a
   * busy socket costs no timer work per frame.
   */
  private watchIdle(conn: Conn, onIdle: () => void): void {
    const check = (): void => {
      const idleMs = this.services.settings.get().responsesSocketIdleMs;
      const left = conn.last + idleMs - Date.now();
      if (!conn.session.busy && left <= 0) return onIdle();
      conn.idle = setTimeout(check, conn.session.busy ? idleMs : left);
      conn.idle.unref();
    };
    conn.idle = setTimeout(check, this.services.settings.get().responsesSocketIdleMs);
    conn.idle.unref();
  }

  private drop(id: string): void {
    const conn = this.conns.get(id);
    if (!conn) return;
    clearTimeout(conn.idle);
    conn.session.end();
    this.conns.delete(id);
  }
}
