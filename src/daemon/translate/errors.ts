/**
 * The error codecs raise. A codec knows its format, not HTTP: a client body it cannot decode is a
 * {@link CodecError} with status 400 (naming the parameter, as the provider would), an upstream reply that is
 * not of its format one with status 502, a missing codec (a wiring bug) 500. The HTTP layer maps it to the
 * standard error body (http/errors.ts `asRouterError`); translate/ imports nothing from http/, store/ or proxy/.
 */
export class CodecError extends Error {
  readonly status: number;
  /** The standard body's `code`, when not the status's own. */
  readonly code?: string;
  /** The offending request field, e.g. `messages[1].content[0].tool_use_id`. */
  readonly param?: string;

  constructor(status: number, message: string, options: { code?: string; param?: string } = {}) {
    super(message);
    this.name = 'CodecError';
    this.status = status;
    this.code = options.code;
    this.param = options.param;
  }
}

/** A client body the codec cannot decode: 400, naming the parameter when known. */
export function decodeError(message: string, param?: string): CodecError {
  return new CodecError(400, message, param ? { param } : {});
}

