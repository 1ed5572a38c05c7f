import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorBody } from './errors.js';

/**
 * node:http's 'clientError': a request that could not even be parsed (a head past the header size limit,
 * a malformed request line, a head that took too long). Without a listener Node answers with a bare status
 * line; this answers with the standard body, then closes the connection, since the rest of the stream
 * cannot be trusted. A socket that is already gone is just destroyed.
 */
export function onClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const message =
    status === 431
      ? 'The request headers are too large (16 KiB at most).'
      : status === 408
        ? 'The request head did not arrive in time.'
        : 'The request could not be parsed as HTTP/1.1.';
  const body = JSON.stringify(errorBody(status, message));
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
