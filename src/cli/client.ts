import { request as httpRequest } from 'node:http';
import { HEADER } from '../shared/headers.js';
import { VERSION } from '../shared/version.js';
import type { ErrorReply } from '../shared/wire.js';
import { routeUrl, splitRoute, type RouteKey, type RouteReply, type RouteRequest } from '../shared/api/contract.js';
import { CliError } from './io.js';
import type { Target } from './target.js';

let warnedVersion = false;

interface RawReply {
  status: number;
  version: string | undefined;
  text: string;
}

/**
 * One HTTP exchange over node:http. The global fetch would do, but its first call loads undici's fetch
 * stack, which costs more than the whole `router status` budget on a slow machine.
 */
function exchange(url: string, method: string, headers: Record<string, string>, body: string | undefined, timeoutMs: number): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const v = res.headers[HEADER.version];
        resolve({ status: res.statusCode ?? 0, version: Array.isArray(v) ? v[0] : v, text: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timed out'), { name: 'TimeoutError' })));
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The one typed client of the daemon's management API. It attaches the CLI token, turns `{error}` replies
 * into CliErrors a person can act on, turns a refused connection into "try `router start`", and warns once
 * when the daemon's version differs from the CLI's.
 */
export class DaemonClient {
  constructor(
    private readonly target: Target,
    private readonly warn: (text: string) => void = (t) => process.stderr.write(`${t}\n`),
  ) {}

  get url(): string {
    return this.target.url;
  }

  /** Headers that authenticate this CLI to the daemon (for the live WebSocket too). */
  authHeaders(): Record<string, string> {
    return this.target.cliToken ? { [HEADER.cliToken]: this.target.cliToken } : {};
  }

  /**
   * Calls a route by its table name (`'GET /api/keys'`) with the params, query and body its schemas
   * declare, answering its declared reply (src/shared/api/, generated from the route table).
   */
  call<K extends RouteKey>(route: K, req?: RouteRequest<K>, timeoutMs?: number): Promise<RouteReply<K>> {
    const { method, path } = splitRoute(route);
    const r = (req ?? {}) as { params?: Record<string, string>; query?: Record<string, unknown>; body?: unknown };
    return this.request<RouteReply<K>>(method, routeUrl(path, r.params, r.query), r.body, timeoutMs);
  }

  async request<T>(method: string, path: string, body?: unknown, timeoutMs = 15_000): Promise<T> {
    const headers: Record<string, string> = { ...this.authHeaders() };
    const payload = body === undefined ? undefined : JSON.stringify(body);
    // The daemon refuses a POST without this type, body or not (what a web page could send is refused).
    if (payload !== undefined || method === 'POST') headers['content-type'] = 'application/json';
    if (payload !== undefined) headers['content-length'] = String(Buffer.byteLength(payload));
    let res: RawReply;
    try {
      res = await exchange(`${this.target.url}${path}`, method, headers, payload, timeoutMs);
    } catch (err) {
      throw connectionError(err, this.target.url);
    }
    this.checkVersion(res.version);
    if (res.status < 200 || res.status >= 300) throw replyError(res.status, res.text, method, path);
    return (res.text ? JSON.parse(res.text) : undefined) as T;
  }

  /** Warns once per process when the daemon runs another version than this CLI. */
  checkVersion(daemonVersion: string | null | undefined): void {
    if (!daemonVersion || daemonVersion === VERSION || warnedVersion) return;
    warnedVersion = true;
    this.warn(`warning: the daemon runs router ${daemonVersion} but this CLI is ${VERSION}; run \`router restart\`.`);
  }
}

/** Builds a query string from defined values only. */
export function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

export function connectionError(err: unknown, url: string): CliError {
  const code = (err as { code?: string }).code ?? (err as { cause?: { code?: string } }).cause?.code;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH' || code === 'EADDRNOTAVAIL') {
    return new CliError(`the router daemon is not running at ${url}; try \`router start\`.`);
  }
  if ((err as Error).name === 'TimeoutError') return new CliError(`the router daemon at ${url} did not answer in time.`);
  return new CliError(`cannot reach the router daemon at ${url}: ${code ?? (err as Error).message}`);
}

/** `models.0.model` -> `models[0].model`: a field path as a person writes it. */
export function fieldPath(param: string): string {
  return param.split('.').reduce((out, seg) => (/^\d+$/.test(seg) ? `${out}[${seg}]` : out ? `${out}.${seg}` : seg), '');
}

/**
 * The daemon's validation message as one line that names the field in words: "Invalid field 'models.0':
 * x" and "x" with param `models.0` both become "models[0]: x" (a body-level problem has no field).
 */
export function validationMessage(message: string, param: string | undefined): string {
  const m = /^Invalid (?:field|query parameter) '([^']*)': (.*)$/s.exec(message);
  const field = m ? m[1]! : param;
  const text = m ? m[2]! : message;
  if (!field || field === 'body' || field === 'query') return text;
  return `${fieldPath(field)}: ${text}`;
}

/**
 * The daemon's messages serve every client, so a fix may name an HTTP route; the CLI names its own
 * command instead (a person at a terminal types commands, not requests).
 */
const ROUTE_TO_COMMAND: ReadonlyArray<[RegExp, string]> = [
  [/\(Providers page, or PUT \/api\/providers\/\{id\} with isActive true\)/, '(the Providers page of the dashboard)'],
  [/POST \/api\/providers\/keychain\/discover/, '`router import --discover`'],
  [/POST \/api\/providers\b/, '`router providers add <provider>`'],
  [/GET \/api\/providers\/catalog/, '`router providers catalog`'],
  [/GET \/(?:v1|api)\/models/, '`router models`'],
  [/PATCH \/api\/settings/, '`router settings set`'],
];

export function commandHints(message: string): string {
  let out = message;
  for (const [re, command] of ROUTE_TO_COMMAND) out = out.replace(re, command);
  return out;
}

/**
 * Turns an error reply into one line a person can act on (never the raw body when it is the standard one,
 * never an internal suffix). A refused validation (400, 422) exits 2 like a local usage error.
 */
export function replyError(status: number, text: string, method = '', path = ''): CliError {
  let message = text.trim() || `the daemon answered HTTP ${status}`;
  let param: string | undefined;
  let code: string | undefined;
  try {
    const e = (JSON.parse(text) as ErrorReply).error;
    message = commandHints(e.message);
    code = e.code;
    if (typeof e.param === 'string') param = e.param;
  } catch {
    // not the standard body; show the text as is
  }
  if (status === 401) {
    return new CliError(
      `not authorized: ${message}`,
      1,
      'The CLI proves itself with a token derived from the state folder. Use the same user and --home as the daemon (`router status` shows which one runs).',
      status,
    );
  }
  if (status === 403) {
    const hint = /loopback/i.test(message)
      ? 'The CLI token is accepted over loopback only: run the CLI on the daemon\'s machine, with --host 127.0.0.1.'
      : undefined;
    return new CliError(`forbidden: ${message}`, 1, hint, status);
  }
  if (status === 404 && code === 'not_found' && /^Not found\.?$/.test(message) && path) {
    return new CliError(`the daemon has no route ${method} ${path.split('?')[0]}; is it older than this CLI (${VERSION})? Try \`router restart\`.`, 1, undefined, status);
  }
  if (status === 400 || status === 422) return new CliError(validationMessage(message, param), 2, undefined, status);
  // Only a 500 is the daemon's own failure; 502-504 report an upstream or an unavailable provider.
  if (status === 500) return new CliError(`the daemon failed: ${message}`, 1, undefined, status);
  return new CliError(message, 1, undefined, status);
}
