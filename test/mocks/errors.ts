import type { Provider } from './types.js';

export interface ErrorSpec {
  status: number;
  message?: string;
  errorType?: string;
  code?: string | null;
  model?: string;
}

export interface ErrorReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const STATUS_TEXT: Record<number, string> = { 529: 'Overloaded' };

/** Reason phrases Node lacks (529 is Anthropic's own). */
export function statusText(status: number): string | undefined {
  return STATUS_TEXT[status];
}

// Messages as the providers word them, so tests that match on text see what production would.
const OPENAI: Record<number, { type: string; code: string | null; message: (m: string) => string }> = {
  400: { type: 'invalid_request_error', code: null, message: () => 'Invalid request.' },
  401: {
    type: 'invalid_request_error',
    code: 'invalid_api_key',
    message: () =>
      'Incorrect API key provided: sk-***. You can find your API key at https://platform.openai.com/account/api-keys.',
  },
  403: {
    type: 'request_forbidden',
    code: 'unsupported_country_region_territory',
    message: () => 'Country, region, or territory not supported',
  },
  404: {
    type: 'invalid_request_error',
    code: 'model_not_found',
    message: (m) => `The model \`${m}\` does not exist or you do not have access to it.`,
  },
  429: {
    type: 'requests',
    code: 'rate_limit_exceeded',
    message: (m) =>
      `Rate limit reached for ${m} in organization org-mock on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.`,
  },
  500: {
    type: 'server_error',
    code: null,
    message: () => 'The server had an error while processing your request. Sorry about that!',
  },
  503: { type: 'server_error', code: null, message: () => 'The engine is currently overloaded, please try again later' },
};

const ANTHROPIC: Record<number, { type: string; message: (m: string) => string }> = {
  400: { type: 'invalid_request_error', message: () => 'messages: field required' },
  401: { type: 'authentication_error', message: () => 'invalid x-api-key' },
  402: { type: 'billing_error', message: () => 'Your credit balance is too low to access the Anthropic API.' },
  403: { type: 'permission_error', message: () => 'Your API key does not have permission to use the specified resource.' },
  404: { type: 'not_found_error', message: (m) => `model: ${m}` },
  413: { type: 'request_too_large', message: () => 'Request exceeds the maximum allowed number of bytes.' },
  429: {
    type: 'rate_limit_error',
    message: () =>
      'This request would exceed the rate limit for your organization of 50 input tokens per minute. Please try again later.',
  },
  500: { type: 'api_error', message: () => 'Internal server error' },
  504: { type: 'timeout_error', message: () => 'Request timed out' },
  529: { type: 'overloaded_error', message: () => 'Overloaded' },
};

const GEMINI: Record<number, { status: string; message: (m: string) => string }> = {
  400: { status: 'INVALID_ARGUMENT', message: () => 'Request contains an invalid argument.' },
  401: {
    status: 'UNAUTHENTICATED',
    message: () =>
      'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
  },
  403: { status: 'PERMISSION_DENIED', message: () => 'The caller does not have permission' },
  404: {
    status: 'NOT_FOUND',
    message: (m) =>
      `models/${m} is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.`,
  },
  429: {
    status: 'RESOURCE_EXHAUSTED',
    message: () =>
      'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.',
  },
  500: {
    status: 'INTERNAL',
    message: () =>
      'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
  },
  503: { status: 'UNAVAILABLE', message: () => 'The model is overloaded. Please try again later.' },
  504: { status: 'DEADLINE_EXCEEDED', message: () => 'Deadline expired before operation could complete.' },
};

/** The error object each provider puts in its bodies (and, for streams, in its error events). */
export function errorObject(provider: Provider, spec: ErrorSpec, requestId: string): object {
  const model = spec.model ?? 'unknown-model';
  const s = spec.status;
  if (provider === 'anthropic') {
    const d = ANTHROPIC[s] ?? { type: s >= 500 ? 'api_error' : 'invalid_request_error', message: () => `HTTP ${s}` };
    return {
      type: 'error',
      error: { type: spec.errorType ?? d.type, message: spec.message ?? d.message(model) },
      request_id: requestId,
    };
  }
  if (provider === 'gemini') {
    const d = GEMINI[s] ?? { status: s >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION', message: () => `HTTP ${s}` };
    return { error: { code: s, message: spec.message ?? d.message(model), status: spec.errorType ?? d.status } };
  }
  const d = OPENAI[s] ?? {
    type: s >= 500 ? 'server_error' : 'invalid_request_error',
    code: null,
    message: () => `HTTP ${s}`,
  };
  return {
    error: {
      message: spec.message ?? d.message(model),
      type: spec.errorType ?? d.type,
      param: null,
      code: spec.code !== undefined ? spec.code : d.code,
    },
  };
}

/** A complete HTTP error reply in the provider's format, with its request-id header. */
export function errorReply(provider: Provider, spec: ErrorSpec, requestId: string): ErrorReply {
  const headers: Record<string, string> = {
    'content-type': provider === 'gemini' ? 'application/json; charset=UTF-8' : 'application/json',
  };
  if (provider === 'anthropic') headers['request-id'] = requestId;
  if (provider === 'openai') headers['x-request-id'] = requestId;
  return { status: spec.status, headers, body: JSON.stringify(errorObject(provider, spec, requestId)) };
}

/** The wrong-key reply each provider gives; Gemini's real answer is 400 API_KEY_INVALID. */
export function authErrorReply(provider: Provider, requestId: string, geminiStatus: 400 | 401): ErrorReply {
  if (provider !== 'gemini') return errorReply(provider, { status: 401 }, requestId);
  const body = {
    error: {
      code: geminiStatus,
      message: 'API key not valid. Please pass a valid API key.',
      status: geminiStatus === 400 ? 'INVALID_ARGUMENT' : 'UNAUTHENTICATED',
      details: [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'API_KEY_INVALID',
          domain: 'googleapis.com',
          metadata: { service: 'generativelanguage.googleapis.com' },
        },
      ],
    },
  };
  return { status: geminiStatus, headers: { 'content-type': 'application/json; charset=UTF-8' }, body: JSON.stringify(body) };
}
