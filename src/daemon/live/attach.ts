import type { IncomingMessage, Server as NodeServer } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { H3 } from 'h3';
import type { Services } from '../services.js';
import { UPGRADE_SLOT, type UpgradeSlot } from './routes.js';

/** Longest error body written on a refused upgrade. */
const MAX_REFUSAL_BODY = 4096;

/**
 * Wires the listener to the live channel and usage tracking: every `upgrade` request goes through the
 * h3 app (so the route table, the authorization pipeline and the route's Origin check decide), and every
 * proxied request is tracked while in flight (live status, request.failed timing).
 */
export function attachLive(node: NodeServer, app: H3, services: Services): void {
  services.usage.inflight.attached = true;
  node.on('request', (req, res) => services.usage.inflight.track(req, res));
  node.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    handleUpgrade(app, services, req, socket, head).catch(() => socket.destroy());
  });
}

async function handleUpgrade(app: H3, services: Services, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
  if (req.method !== 'GET') return writeRaw(socket, 405, 'Only GET requests may upgrade.');
  let url: URL;
  try {
    url = new URL(req.url ?? '/', 'http://router.invalid');
  } catch {
    return writeRaw(socket, 400, 'Malformed request URL.');
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  const slot: UpgradeSlot = {};
  const context = { remoteAddress: (socket as { remoteAddress?: string }).remoteAddress ?? '', [UPGRADE_SLOT]: slot };
  const response = await app.request(new Request(url, { method: 'GET', headers }), undefined, context);
  if (slot.accepted && !socket.destroyed) {
    services.live.accept(socket, head, slot.accepted.key, services.version);
    return;
  }
  if (slot.responses && !socket.destroyed) {
    services.responsesSocket.accept(req, socket, head, slot.responses);
    return;
  }
  const body = (await response.text().catch(() => '')).slice(0, MAX_REFUSAL_BODY);
  writeRaw(socket, response.status, body, response.headers);
}

/** Writes a plain HTTP/1.1 reply on a socket that was not upgraded, then closes it. */
function writeRaw(socket: Duplex, status: number, body: string, headers?: Headers): void {
  if (socket.destroyed) return;
  const bytes = Buffer.from(body, 'utf8');
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`];
  headers?.forEach((value, name) => {
    if (!/^(content-length|connection|transfer-encoding)$/i.test(name)) lines.push(`${name}: ${value.replace(/[\r\n]/g, ' ')}`);
  });
  if (!headers?.has('content-type')) lines.push('Content-Type: text/plain; charset=utf-8');
  lines.push(`Content-Length: ${bytes.length}`, 'Connection: close');
  socket.end(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), bytes]));
}
