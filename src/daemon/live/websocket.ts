/**
 * The server side of RFC 6455 that the live channel needs: the opening handshake, text frames out,
 * and from the client only control frames (close, ping, pong) and small data frames, which are ignored.
 * Kept deliberately small: no extensions (permessage-deflate is declined by omission), no subprotocols.
 * Should crossws become a dependency, it can replace this file; the route, auth and origin checks stay.
 */
import { createHash } from 'node:crypto';
import type { Duplex } from 'node:stream';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
/** Largest client frame payload accepted; the live channel reads nothing from clients. */
const MAX_CLIENT_PAYLOAD = 64 * 1024;
/** A client that lets this much output pile up is dropped (it stopped reading). */
const MAX_BUFFERED = 4 * 1024 * 1024;

/** The Sec-WebSocket-Accept value for a client's Sec-WebSocket-Key. */
export function acceptValue(key: string): string {
  return createHash('sha1').update(key + GUID).digest('base64');
}

/** Checks the upgrade request's WebSocket headers; returns a problem (status and message) or undefined. */
export function checkHandshake(headers: Headers): { status: number; message: string; headers?: Record<string, string> } | undefined {
  if (headers.get('upgrade')?.toLowerCase() !== 'websocket') return { status: 426, message: 'Upgrade: websocket is required.' };
  const connection = (headers.get('connection') ?? '').toLowerCase().split(',').map((s) => s.trim());
  if (!connection.includes('upgrade')) return { status: 400, message: 'Connection: Upgrade is required.' };
  if (headers.get('sec-websocket-version') !== '13') {
    return { status: 426, message: 'Only WebSocket version 13 is supported.', headers: { 'Sec-WebSocket-Version': '13' } };
  }
  const key = headers.get('sec-websocket-key') ?? '';
  if (!/^[A-Za-z0-9+/]{22}==$/.test(key)) return { status: 400, message: 'Sec-WebSocket-Key is missing or malformed.' };
  return undefined;
}

/** Encodes one unmasked server frame. */
export function encodeFrame(opcode: number, payload: Buffer): Buffer {
  const len = payload.length;
  let header: Buffer;
  if (len < 126) {
    header = Buffer.from([0x80 | opcode, len]);
  } else if (len < 65536) {
    header = Buffer.alloc(4);
    header[0] = 0x80 | opcode;
    header[1] = 126;
    header.writeUInt16BE(len, 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = 0x80 | opcode;
    header[1] = 127;
    header.writeBigUInt64BE(BigInt(len), 2);
  }
  return Buffer.concat([header, payload]);
}

/** One accepted WebSocket connection (after the 101 reply was written). */
export class WsConnection {
  private buffered: Buffer = Buffer.alloc(0);
  private closing = false;
  private ended = false;

  constructor(
    private readonly socket: Duplex,
    head: Buffer,
    private readonly onEnd: (conn: WsConnection) => void,
  ) {
    (socket as Duplex & { setNoDelay?: (on: boolean) => void }).setNoDelay?.(true);
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', () => this.terminate());
    socket.on('close', () => this.finish());
    socket.on('end', () => this.terminate());
    if (head.length) this.receive(head);
  }

  /** Sends a text message; false when the connection is closing or was dropped for not reading. */
  send(text: string): boolean {
    if (this.closing || this.ended) return false;
    if (this.socket.writableLength > MAX_BUFFERED) {
      this.terminate();
      return false;
    }
    this.socket.write(encodeFrame(0x1, Buffer.from(text, 'utf8')));
    return true;
  }

  /** Starts the closing handshake; the socket is destroyed if the peer does not answer within a second. */
  close(code = 1000, reason = ''): void {
    if (this.closing || this.ended) return;
    this.closing = true;
    const payload = Buffer.alloc(2 + Buffer.byteLength(reason));
    payload.writeUInt16BE(code, 0);
    payload.write(reason, 2);
    this.socket.write(encodeFrame(0x8, payload));
    this.socket.end();
    setTimeout(() => this.terminate(), 1_000).unref();
  }

  /** Drops the connection at once. */
  terminate(): void {
    this.socket.destroy();
    this.finish();
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.onEnd(this);
  }

  private receive(chunk: Buffer): void {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    while (!this.ended) {
      const frame = this.parse();
      if (frame === 'incomplete') return;
      if (frame === 'invalid') return this.protocolError();
      this.handle(frame.opcode, frame.payload);
    }
  }

  private parse(): { opcode: number; payload: Buffer } | 'incomplete' | 'invalid' {
    const b = this.buffered;
    if (b.length < 2) return 'incomplete';
    const opcode = b[0]! & 0x0f;
    const masked = (b[1]! & 0x80) !== 0;
    if ((b[0]! & 0x70) !== 0 || !masked) return 'invalid'; // no extensions negotiated; clients must mask
    let len = b[1]! & 0x7f;
    let offset = 2;
    if (len === 126) {
      if (b.length < 4) return 'incomplete';
      len = b.readUInt16BE(2);
      offset = 4;
    } else if (len === 127) {
      if (b.length < 10) return 'incomplete';
      const big = b.readBigUInt64BE(2);
      if (big > BigInt(MAX_CLIENT_PAYLOAD)) return 'invalid';
      len = Number(big);
      offset = 10;
    }
    if (len > MAX_CLIENT_PAYLOAD || (opcode >= 0x8 && len > 125)) return 'invalid';
    if (b.length < offset + 4 + len) return 'incomplete';
    const mask = b.subarray(offset, offset + 4);
    const payload = Buffer.from(b.subarray(offset + 4, offset + 4 + len));
    for (let i = 0; i < payload.length; i++) payload[i]! ^= mask[i & 3]!;
    this.buffered = b.subarray(offset + 4 + len);
    return { opcode, payload };
  }

  private handle(opcode: number, payload: Buffer): void {
    switch (opcode) {
      case 0x8: // close: echo the code and end
        if (!this.closing) {
          this.closing = true;
          this.socket.write(encodeFrame(0x8, payload.subarray(0, 2)));
        }
        this.socket.end();
        return;
      case 0x9: // ping
        if (!this.closing) this.socket.write(encodeFrame(0xa, payload));
        return;
      case 0x0: // continuation, text, binary, pong: nothing to do
      case 0x1:
      case 0x2:
      case 0xa:
        return;
      default:
        this.protocolError();
    }
  }

  private protocolError(): void {
    if (!this.closing && !this.ended) {
      this.closing = true;
      const payload = Buffer.alloc(2);
      payload.writeUInt16BE(1002, 0);
      this.socket.write(encodeFrame(0x8, payload));
    }
    this.socket.end();
    setTimeout(() => this.terminate(), 200).unref();
  }
}
