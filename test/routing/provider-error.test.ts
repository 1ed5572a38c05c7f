import { describe, expect, it } from 'vitest';
import {
  classifyFailure,
  extractUpstreamError,
  type FailureInput,
  type FailureKind,
  formatProviderError,
  isBreakerEligible,
  isRetryable,
} from '../../src/daemon/routing/provider-error.js';

describe('formatProviderError', () => {
  it.each<[string | number | undefined | null, string]>([
    [429, '[429]: Too many'],
    ['rate_limit_exceeded', '[rate_limit_exceeded]: Too many'],
    [undefined, '[FETCH_FAILED]: Too many'],
    [null, '[FETCH_FAILED]: Too many'],
    ['', '[FETCH_FAILED]: Too many'],
  ])('code %s', (code, expected) => {
    expect(formatProviderError(code, 'Too many')).toBe(expected);
  });
});

describe('extractUpstreamError', () => {
  it.each<[string, number, string, ReturnType<typeof extractUpstreamError>]>([
    [
      'OpenAI',
      429,
      JSON.stringify({ error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } }),
      { status: 429, message: 'Rate limit reached', code: 'rate_limit_exceeded', type: 'requests' },
    ],
    [
      'OpenAI with null code falls back to the type',
      400,
      JSON.stringify({ error: { message: 'Bad model', type: 'invalid_request_error', code: null } }),
      { status: 400, message: 'Bad model', code: 'invalid_request_error', type: 'invalid_request_error' },
    ],
    [
      'Anthropic',
      529,
      JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
      { status: 529, message: 'Overloaded', code: 'overloaded_error', type: 'overloaded_error' },
    ],
    [
      'Gemini',
      429,
      JSON.stringify({ error: { code: 429, message: 'Quota exceeded', status: 'RESOURCE_EXHAUSTED' } }),
      { status: 429, message: 'Quota exceeded', code: 'RESOURCE_EXHAUSTED' },
    ],
    [
      'Gemini wrapped in an array',
      503,
      JSON.stringify([{ error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } }]),
      { status: 503, message: 'The model is overloaded.', code: 'UNAVAILABLE' },
    ],
    ['error as a string', 500, JSON.stringify({ error: 'boom' }), { status: 500, message: 'boom' }],
    ['top-level message', 404, JSON.stringify({ message: 'Not here' }), { status: 404, message: 'Not here' }],
    ['plain text', 502, '  upstream connect error  ', { status: 502, message: 'upstream connect error' }],
    ['HTML page title', 502, '<html><head><title>502 Bad Gateway</title></head></html>', { status: 502, message: '502 Bad Gateway' }],
    ['HTML without title', 502, '<html><body>x</body></html>', { status: 502, message: 'HTTP 502' }],
    ['empty body', 500, '', { status: 500, message: 'HTTP 500' }],
    ['whitespace body', 503, '  \n', { status: 503, message: 'HTTP 503' }],
    ['JSON without a message is kept as text', 500, '{"ok":false}', { status: 500, message: '{"ok":false}' }],
    ['broken JSON is kept as text', 500, '{"error":', { status: 500, message: '{"error":' }],
  ])('%s', (_name, status, body, expected) => {
    expect(extractUpstreamError(status, body)).toEqual(expected);
  });

  it('handles undefined and null bodies', () => {
    expect(extractUpstreamError(500, undefined)).toEqual({ status: 500, message: 'HTTP 500' });
    expect(extractUpstreamError(500, null)).toEqual({ status: 500, message: 'HTTP 500' });
  });

  it('truncates very long messages', () => {
    const message = extractUpstreamError(500, 'x'.repeat(2000)).message;
    expect(message).toHaveLength(503);
    expect(message.endsWith('...')).toBe(true);
  });

  it('composes with formatProviderError', () => {
    const e = extractUpstreamError(429, JSON.stringify({ error: { code: 429, message: 'Slow down', status: 'RESOURCE_EXHAUSTED' } }));
    expect(formatProviderError(e.code ?? e.status, e.message)).toBe('[RESOURCE_EXHAUSTED]: Slow down');
  });
});

const timeoutError = Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' });
const undiciTimeout = new TypeError('fetch failed', {
  cause: Object.assign(new Error('Connect Timeout Error'), { code: 'UND_ERR_CONNECT_TIMEOUT' }),
});
const refused = new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });

describe('classifyFailure', () => {
  it.each<[string, FailureInput, FailureKind, boolean, boolean]>([
    ['connection refused', { error: refused }, 'network', true, true],
    ['no information at all', {}, 'network', true, true],
    ['AbortSignal.timeout', { error: timeoutError }, 'timeout', true, true],
    ['undici connect timeout in cause', { error: undiciTimeout }, 'timeout', true, true],
    ['ETIMEDOUT', { error: Object.assign(new Error('x'), { code: 'ETIMEDOUT' }) }, 'timeout', true, true],
    ['HTTP 408', { status: 408 }, 'timeout', true, false],
    ['HTTP 429', { status: 429 }, 'rate_limit', true, false],
    ['HTTP 500', { status: 500 }, 'server', true, true],
    ['HTTP 503', { status: 503 }, 'server', true, true],
    ['HTTP 529', { status: 529 }, 'server', true, true],
    ['HTTP 401', { status: 401 }, 'auth', true, false],
    ['HTTP 403', { status: 403 }, 'auth', true, false],
    ['HTTP 400', { status: 400 }, 'client', false, false],
    ['HTTP 404', { status: 404 }, 'client', false, false],
    ['HTTP 422', { status: 422 }, 'client', false, false],
    ['HTTP 400 content policy', { status: 400, code: 'content_policy_violation' }, 'content_filter', true, false],
    ['empty stream', { status: 200, emptyStream: true }, 'empty', true, false],
    ['content filtered stream', { status: 200, contentFiltered: true }, 'content_filter', true, false],
    ['content filter beats empty', { emptyStream: true, contentFiltered: true }, 'content_filter', true, false],
  ])('%s', (_name, input, kind, retryable, breakerEligible) => {
    expect(classifyFailure(input)).toMatchObject({ kind, retryable, breakerEligible });
  });

  it.each<[string, Parameters<typeof classifyFailure>[0], FailureKind, string]>([
    ['HTTP 402', { status: 402 }, 'quota', 'account'],
    ['OpenAI 429 insufficient_quota', { status: 429, code: 'insufficient_quota', message: 'You exceeded your current quota, please check your plan and billing details.' }, 'quota', 'account'],
    ['Codex 429 usage_limit_reached', { status: 429, code: 'usage_limit_reached', message: 'The usage limit has been reached' }, 'quota', 'account'],
    ['Anthropic 400 credit balance', { status: 400, code: 'invalid_request_error', message: 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.' }, 'quota', 'account'],
    ['Anthropic billing_error', { status: 400, code: 'billing_error', message: 'billing' }, 'quota', 'account'],
    ['OpenAI 404 model_not_found', { status: 404, code: 'model_not_found', message: 'The model `gpt-9` does not exist or you do not have access to it.' }, 'model_access', 'model_on_account'],
    ['Anthropic 404 model', { status: 404, code: 'not_found_error', message: 'model: claude-opus-9' }, 'model_access', 'model_on_account'],
    ['Gemini 404 model', { status: 404, code: 'NOT_FOUND', message: 'models/gemini-1.5-ultra is not found for API version v1beta, or is not supported for generateContent.' }, 'model_access', 'model_on_account'],
    ['plain 404', { status: 404, message: 'Not Found' }, 'client', 'request'],
    ['400 naming a model parameter', { status: 400, message: "Unsupported parameter: 'max_tokens' is not supported with this model." }, 'client', 'request'],
    ['plain 429', { status: 429 }, 'rate_limit', 'model_on_account'],
    ['HTTP 500', { status: 500 }, 'server', 'transient'],
    ['network', { error: new Error('reset') }, 'network', 'provider'],
    ['HTTP 401', { status: 401 }, 'auth', 'account'],
    ['HTTP 400', { status: 400 }, 'client', 'request'],
  ])('scope: %s', (_name, input, kind, scope) => {
    const failure = classifyFailure(input);
    expect(failure).toMatchObject({ kind, scope, retryable: scope !== 'request', breakerEligible: scope === 'provider' || (scope === 'transient' && kind === 'server') });
  });

  it('survives a cyclic cause chain', () => {
    const a: Error & { cause?: unknown } = new Error('a');
    const b: Error & { cause?: unknown } = new Error('b', { cause: a });
    a.cause = b;
    expect(classifyFailure({ error: a }).kind).toBe('network');
  });
});

describe('isRetryable / isBreakerEligible', () => {
  it.each<[FailureKind, boolean, boolean]>([
    ['network', true, true],
    ['timeout', true, true],
    ['rate_limit', true, false],
    ['server', true, true],
    ['auth', true, false],
    ['quota', true, false],
    ['model_access', true, false],
    ['client', false, false],
    ['empty', true, false],
    ['content_filter', true, false],
  ])('%s', (kind, retryable, eligible) => {
    expect(isRetryable(kind)).toBe(retryable);
    expect(isBreakerEligible(kind)).toBe(eligible);
  });

  it('never counts a 4xx status against the breaker and retries a client 408', () => {
    expect(isBreakerEligible('timeout', 408)).toBe(false);
    expect(isBreakerEligible('server', 502)).toBe(true);
    expect(isRetryable('client', 408)).toBe(true);
    expect(isRetryable('client', 400)).toBe(false);
  });
});
