/**
 * The one error type handlers throw, and the one formatter that turns anything thrown into the standard
 * body `{error: {message, type, code}}`. No handler writes its own error JSON.
 */

import { statusInfo } from '../../shared/error-status.js';
import { CodecError } from '../translate/errors.js';
import type { WireFormat } from '../translate/ir.js';
import { getClientCodec } from '../translate/registry.js';
import { SecretError } from '../store/secrets.js';
import { MigrationError } from '../store/migrate.js';
import { DatabaseUnavailableError } from '../store/driver.js';

export { statusInfo };

export interface RouterErrorOptions {
  code?: string;
  type?: string;
  /** Extra fields placed inside `error` (e.g. `provider`, `retry_after`, `param`). */
  extra?: Record<string, unknown>;
  /** Response headers to send with the error (e.g. `Retry-After`). */
  headers?: Record<string, string>;
  cause?: unknown;
}

/** An error with an HTTP status, safe to show to clients. */
export class RouterError extends Error {
  readonly status: number;
  readonly code: string;
  readonly type: string;
  readonly extra?: Record<string, unknown>;
  headers?: Record<string, string>;

  constructor(status: number, message?: string, options: RouterErrorOptions = {}) {
    const info = statusInfo(status);
    super(message || info.message, { cause: options.cause });
    this.name = 'RouterError';
    this.status = status;
    this.code = options.code ?? info.code;
    this.type = options.type ?? info.type;
    this.extra = options.extra;
    this.headers = options.headers;
  }
}

/**
 * A codec's error as the RouterError it stands for (status, code, `param`); anything else unchanged. Codecs
 * know formats, not HTTP (translate/errors.ts): this is where their errors meet the standard body.
 */
export function asRouterError(error: unknown): unknown {
  if (!(error instanceof CodecError)) return error;
  return new RouterError(error.status, error.message, {
    ...(error.code ? { code: error.code } : {}),
    ...(error.param ? { extra: { param: error.param } } : {}),
    cause: error,
  });
}

/** Shorthand for the common 400. `param` names the offending field when known. */
export function badRequest(message: string, param?: string): RouterError {
  return new RouterError(400, message, param ? { extra: { param } } : {});
}

export interface ErrorBody {
  error: { message: string; type: string; code: string; [extra: string]: unknown };
}

/** Builds the standard body for a status, with the standard message when none is given. */
export function errorBody(status: number, message?: string, code?: string, type?: string): ErrorBody {
  const info = statusInfo(status);
  return { error: { message: sanitizeMessage(message || info.message), type: type ?? info.type, code: code ?? info.code } };
}

// Absolute paths (POSIX and Windows) and `file://` URLs must never reach a client: they leak the layout
// of the machine. Stack frames ("    at fn (file:line)") are cut for the same reason. HTTP routes are not
// files: `GET /v1/models` or `POST /api/providers` in a message, and the path of an http(s) URL, stay.
const PATH_RE = /(?:file:\/\/)?(?:[A-Za-z]:\\|\/)(?:[\w.@+-]+[\\/])+[\w.@+-]*/g;
const ROUTE_RE = /^\/(?:v1|v1beta|api|\.well-known)\//;

/** True for a path under one of router's route prefixes (kept readable in messages). */
export function isRoutePath(path: string): boolean {
  return ROUTE_RE.test(path);
}

function scrubPath(match: string, offset: number, text: string): string {
  if (!match.startsWith('file:') && (isRoutePath(match) || (offset > 0 && text[offset - 1] === '/'))) return match;
  return '<path>';
}

/** Removes stack traces and absolute paths from a message meant for a client, and caps its length. */
export function sanitizeMessage(message: string): string {
  const firstLine = message.split(/\n\s+at /)[0] ?? '';
  const clean = firstLine.replace(PATH_RE, scrubPath).trim();
  return clean.length > 2000 ? `${clean.slice(0, 2000)}...` : clean;
}

/**
 * A standard body in a client format's own error shape, for the routes that speak that format (Anthropic
 * `{type: "error", error: {type, message, code...}}`, Gemini `{error: {code, message, status, details}}`):
 * each client's SDK reads the error as its provider's. The OpenAI formats' shape is the standard body.
 */
export function clientErrorBody(format: WireFormat, status: number, body: ErrorBody): Record<string, unknown> {
  const { message, type, code, ...extra } = body.error;
  return getClientCodec(format).encodeError({ type: 'error', status, message, errorType: type, code }, { code, ...extra });
}

/**
 * Error classes whose messages router writes for people (a refusal, a codec's complaint, a failed
 * upstream attempt): their text may reach a client. Modules above this one add theirs (`publicErrorClass`).
 */
const PUBLIC_ERRORS: Array<abstract new (...args: never[]) => Error> = [RouterError, CodecError, SecretError, MigrationError];

/** Declares an error class whose messages are written for people (see `publicReason`). */
export function publicErrorClass(cls: abstract new (...args: never[]) => Error): void {
  if (!PUBLIC_ERRORS.includes(cls)) PUBLIC_ERRORS.push(cls);
}

/** What a system, network, TLS or SQLite error code means, in words that name no path and no internals. */
const REASONS: Record<string, string> = {
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was reset',
  EPIPE: 'the connection was closed',
  ETIMEDOUT: 'the connection timed out',
  ENOTFOUND: 'the host name was not found',
  EAI_AGAIN: 'the host name could not be resolved',
  EHOSTUNREACH: 'the host cannot be reached',
  ENETUNREACH: 'the network cannot be reached',
  UND_ERR_CONNECT_TIMEOUT: 'the connection timed out',
  UND_ERR_HEADERS_TIMEOUT: 'no reply came in time',
  UND_ERR_BODY_TIMEOUT: 'the reply stopped coming',
  UND_ERR_SOCKET: 'the connection failed',
  CERT_HAS_EXPIRED: 'its TLS certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'its TLS certificate is not trusted',
  SELF_SIGNED_CERT_IN_CHAIN: 'its TLS certificate is not trusted',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'its TLS certificate is not trusted',
  ERR_TLS_CERT_ALTNAME_INVALID: 'its TLS certificate does not name this host',
  SQLITE_NOTADB: 'the file is not a database',
  SQLITE_CORRUPT: 'the database is damaged',
  ENOSPC: 'the disk is full',
  ABORT_ERR: 'it was cancelled',
};

/**
 * A failure as a client may read it: router's own messages as they are (sanitized), a known system or
 * network failure in plain words, anything else as `fallback`. Raw exception text (a library's message, a
 * driver's internals) never reaches a reply; callers log the error itself.
 */
export function publicReason(err: unknown, fallback = 'an unexpected error (details in the daemon log)'): string {
  if (err instanceof Error && PUBLIC_ERRORS.some((cls) => err instanceof cls)) return sanitizeMessage(err.message);
  for (let e: unknown = err, depth = 0; e && typeof e === 'object' && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && REASONS[code]) return REASONS[code];
    const name = (e as { name?: unknown }).name;
    if (name === 'AbortError') return 'it was cancelled';
    if (name === 'TimeoutError') return 'it timed out';
  }
  return fallback;
}

/** Converts anything thrown into a status and standard body. Unknown errors become an opaque 500. */
export function toErrorReply(thrown: unknown): { status: number; body: ErrorBody; headers?: Record<string, string> } {
  const error = asRouterError(thrown);
  if (error instanceof RouterError) {
    const body = errorBody(error.status, error.message, error.code, error.type);
    if (error.extra) Object.assign(body.error, error.extra);
    return { status: error.status, body, headers: error.headers };
  }
  if (error instanceof DatabaseUnavailableError) {
    // The shared database (cluster mode) is down: say so, never the driver's text (hosts, internals).
    return { status: 503, body: errorBody(503, error.message, 'database_unavailable'), headers: { 'retry-after': '5' } };
  }
  const known = knownFailure(error);
  if (known) return { status: known, body: errorBody(known, known === 400 ? TOO_DEEP_MESSAGE : undefined, known === 400 ? 'nesting_too_deep' : undefined) };
  const status = httpStatusOf(error);
  if (status && status >= 400 && status < 500) {
    // h3's own errors (malformed URL, body limit...) carry safe messages for 4xx.
    return { status, body: errorBody(status, (error as Error).message) };
  }
  return { status: 500, body: errorBody(500) };
}

/**
 * Failures with a known meaning that are not RouterErrors: the disk is full (SQLite says SQLITE_FULL, the
 * system ENOSPC) -> 507; the stack ran out while handling a request -> 400, since only input nested far
 * too deeply (5,000 levels of JSON, which JSON.parse accepts but serializing or walking it does not) gets
 * there, and checking every body's depth up front would cost more than parsing it.
 */
function knownFailure(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (code === 'SQLITE_FULL' || code === 'ENOSPC') return 507;
  if (error instanceof RangeError && error.message.includes('call stack')) return 400;
  return undefined;
}

/** The standard message of a stack overflow on input (see knownFailure). */
export const TOO_DEEP_MESSAGE = 'The request is nested too deeply.';

function httpStatusOf(error: unknown): number | undefined {
  if (error && typeof error === 'object' && 'status' in error && typeof error.status === 'number') return error.status;
  return undefined;
}
