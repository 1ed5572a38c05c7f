/**
 * router's standard error vocabulary: the `type` and `code` of the standard body `{error: {message, type,
 * code}}` for each status. The daemon's HTTP layer and the codecs (which write errors in each client's
 * format) read it; the CLI may too.
 */

export interface StatusInfo {
  type: string;
  code: string;
  message: string;
}

const STATUS: Record<number, StatusInfo> = {
  400: { type: 'invalid_request_error', code: 'bad_request', message: 'The request is invalid.' },
  401: { type: 'authentication_error', code: 'unauthorized', message: 'Authentication is required.' },
  403: { type: 'permission_error', code: 'forbidden', message: 'This caller may not use this route.' },
  404: { type: 'not_found_error', code: 'not_found', message: 'Not found.' },
  405: { type: 'invalid_request_error', code: 'method_not_allowed', message: 'Method not allowed.' },
  408: { type: 'timeout_error', code: 'request_timeout', message: 'The request timed out.' },
  409: { type: 'conflict_error', code: 'conflict', message: 'The request conflicts with existing state.' },
  410: { type: 'invalid_request_error', code: 'gone', message: 'This resource is gone.' },
  413: { type: 'request_too_large', code: 'payload_too_large', message: 'The request body is too large.' },
  415: { type: 'invalid_request_error', code: 'unsupported_media_type', message: 'Unsupported content type.' },
  422: { type: 'invalid_request_error', code: 'unprocessable_entity', message: 'The request cannot be processed.' },
  429: { type: 'rate_limit_error', code: 'rate_limited', message: 'Too many requests.' },
  431: { type: 'invalid_request_error', code: 'request_header_fields_too_large', message: 'The request headers are too large.' },
  499: { type: 'invalid_request_error', code: 'client_closed_request', message: 'The client closed the connection.' },
  500: { type: 'server_error', code: 'internal_error', message: 'Internal server error.' },
  501: { type: 'server_error', code: 'not_implemented', message: 'Not implemented.' },
  502: { type: 'upstream_error', code: 'bad_gateway', message: 'The upstream provider failed.' },
  503: { type: 'server_error', code: 'service_unavailable', message: 'Service unavailable.' },
  504: { type: 'timeout_error', code: 'gateway_timeout', message: 'The upstream provider timed out.' },
  507: { type: 'server_error', code: 'insufficient_storage', message: 'The disk is full: router could not save the change.' },
};

/** Type, code and standard message for a status; unknown statuses fall back to their class (4xx/5xx). */
export function statusInfo(status: number): StatusInfo {
  const known = STATUS[status];
  if (known) return known;
  if (status >= 500) return { type: 'server_error', code: `http_${status}`, message: 'Server error.' };
  return { type: 'invalid_request_error', code: `http_${status}`, message: 'The request failed.' };
}
