/**
 * Reading and classifying upstream failures. The classification drives two independent decisions:
 * whether the router tries the next account/target (`retryable`) and whether the failure counts against
 * the provider's circuit breaker (`breakerEligible`: only signs that the provider itself is down).
 */

/** Code used in `[<code>]: <message>` when neither a status nor an error code is known. */
export const DEFAULT_ERROR_CODE = 'FETCH_FAILED';

/** Formats a provider error message as `[<code>]: <message>`; the code defaults to `FETCH_FAILED`. */
export function formatProviderError(code: string | number | undefined | null, message: string): string {
  const label = code === undefined || code === null || code === '' ? DEFAULT_ERROR_CODE : String(code);
  return `[${label}]: ${message}`;
}

/** What could be read from an upstream error response. */
export interface UpstreamError {
  status: number;
  message: string;
  /** The provider's own error code when it sent one (`rate_limit_exceeded`, `RESOURCE_EXHAUSTED`...). */
  code?: string;
  /** The provider's error type when it sent one (`invalid_request_error`, `overloaded_error`...). */
  type?: string;
}

const MAX_TEXT_MESSAGE = 500;

/**
 * Pulls the message, code and type out of an upstream error body. Understands OpenAI
 * `{error:{message,type,code}}`, Anthropic `{type:'error',error:{type,message}}`, Gemini
 * `{error:{code,message,status}}` (also wrapped in an array), `{error:"text"}`, `{message}`, plain text
 * and HTML pages (their `<title>`). An empty body yields `HTTP <status>`.
 */
export function extractUpstreamError(status: number, bodyText: string | undefined | null): UpstreamError {
  const text = (bodyText ?? '').trim();
  if (text === '') return { status, message: `HTTP ${status}` };
  const parsed = parseJson(text);
  if (parsed !== undefined) {
    const fromJson = fromJsonBody(status, Array.isArray(parsed) ? parsed[0] : parsed);
    if (fromJson) return fromJson;
  }
  if (text.startsWith('<')) {
    const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1]?.trim();
    return { status, message: title || `HTTP ${status}` };
  }
  return { status, message: truncate(text) };
}

function parseJson(text: string): unknown {
  if (text[0] !== '{' && text[0] !== '[') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function fromJsonBody(status: number, body: unknown): UpstreamError | undefined {
  if (!isRecord(body)) return undefined;
  const error = body.error;
  if (typeof error === 'string' && error) return { status, message: truncate(error) };
  // FastAPI-style services (Jina, Voyage) answer `{detail: "..."}`.
  if (typeof body.detail === 'string' && body.detail && body.message === undefined) return { status, message: truncate(body.detail) };
  const source = isRecord(error) ? error : body;
  const message = stringField(source, 'message') ?? stringField(body, 'message');
  if (!message) return undefined;
  // OpenAI puts the specific code in `code`, Gemini in `status` (its `code` is the HTTP number),
  // Anthropic only has `type`; take the most specific one available.
  const type = stringField(source, 'type');
  const code = stringField(source, 'code') ?? stringField(source, 'status') ?? type;
  const result: UpstreamError = { status, message: truncate(message) };
  if (code) result.code = code;
  if (type && type !== 'error') result.type = type;
  return result;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function stringField(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function truncate(text: string): string {
  return text.length > MAX_TEXT_MESSAGE ? `${text.slice(0, MAX_TEXT_MESSAGE)}...` : text;
}

/**
 * Why an upstream attempt failed. `quota` is an account out of credit or past its usage limit (HTTP 402,
 * OpenAI `insufficient_quota`, Codex `usage_limit_reached`, Anthropic `billing_error`); `model_access` is
 * a model this account cannot use (404 `model_not_found` and the like) though another account may.
 */
export type FailureKind =
  | 'network'
  | 'timeout'
  | 'rate_limit'
  | 'server'
  | 'auth'
  | 'quota'
  | 'model_access'
  | 'client'
  | 'empty'
  | 'content_filter';

/**
 * What a failure says is broken (as Bifrost's failure classes): the request itself (it would fail
 * anywhere: the request ends), the account or key (every model of it: rotate to the next account), this
 * model on this account (rotate; the account still serves other models), the provider (unreachable: its
 * circuit), or nothing lasting (a 5xx, an empty stream: try elsewhere, count towards the account's streak).
 */
export type FailureScope = 'request' | 'account' | 'model_on_account' | 'provider' | 'transient';

/** A classified failure with every decision derived from it, made once where the failure is built. */
export interface ClassifiedFailure {
  kind: FailureKind;
  scope: FailureScope;
  status?: number;
  /** Try the next account or combo target: every scope but `request`. */
  retryable: boolean;
  /** Count against a circuit breaker (see `breakerScope` for which: the provider's or the model's). */
  breakerEligible: boolean;
  /**
   * Seconds the account is cooled down (429s, 5xx that said how long to wait, quota replies): for the
   * model, or for every model of the account when `scope` is `account`.
   */
  coolSeconds?: number;
  /** An auth failure (401/403) the reactive expiry check may confirm. */
  authConfirmable: boolean;
}

/** What the caller knows about a failed attempt; give whichever applies. */
export interface FailureInput {
  /** Upstream HTTP status, when a response arrived. */
  status?: number;
  /** The thrown error, when no response arrived (fetch failure, abort, timeout). */
  error?: unknown;
  /** The provider's error code or type (from {@link extractUpstreamError}). */
  code?: string;
  /** The provider's error message (from {@link extractUpstreamError}); read for quota and model-access wording. */
  message?: string;
  /** The stream ended without any content. */
  emptyStream?: boolean;
  /** The provider refused or cut the output for safety (e.g. `finish_reason: content_filter`). */
  contentFiltered?: boolean;
}

const CONTENT_FILTER_CODES = new Set(['content_filter', 'content_policy_violation', 'safety', 'prohibited_content']);

/** Provider codes that say the account (not the request, not this minute) has no quota or credit left. */
const QUOTA_CODES = new Set(['insufficient_quota', 'usage_limit_reached', 'billing_hard_limit_reached', 'billing_error', 'quota_exceeded', 'payment_required', 'credits_exhausted']);

/** Messages of 4xx replies that mean an account out of credit (Anthropic answers a 400 for it). */
const QUOTA_MESSAGE_RE = /credit balance is too low|insufficient (?:credits|balance|funds)|exceeded your current quota|out of credits|billing (?:hard )?limit/i;

/** Provider codes that say this model is not available to this key. */
const MODEL_ACCESS_CODES = new Set(['model_not_found', 'model_not_available', 'unsupported_model', 'model_access_denied']);

/** A 404 (or 400) whose message says the model does not exist or is not available to this key. */
const MODEL_ACCESS_MESSAGE_RE = /\bmodels?\b[^\n]{0,160}?(?:does not exist|not found|is not supported|not available|do not have access|does not have access)|do(?:es)? not have access to (?:the )?model|^model: /i;

/**
 * Classifies a failed attempt. Precedence: content filter, empty stream, HTTP status, then the thrown
 * error (timeouts by name/code, anything else is `network`). A 4xx whose provider code names a content
 * policy is `content_filter`; HTTP 408 is `timeout` but, being 4xx, not breaker-eligible. 402 and quota
 * codes are `quota`, model-availability replies `model_access`: both move on to the next account.
 * A caller-initiated abort (client went away) is not an upstream failure and should not be classified.
 */
export function classifyFailure(input: FailureInput): ClassifiedFailure {
  const kind = failureKind(input);
  const status = input.status;
  const scope = failureScope(kind, status);
  return { kind, scope, status, retryable: scope !== 'request', breakerEligible: isBreakerEligible(kind, status), authConfirmable: kind === 'auth' };
}

function failureKind(input: FailureInput): FailureKind {
  if (input.contentFiltered) return 'content_filter';
  if (input.emptyStream) return 'empty';
  const status = input.status;
  if (status !== undefined && status > 0) {
    const code = input.code?.toLowerCase();
    if (status === 402 || (status >= 400 && status < 500 && isQuota(code, input.message))) return 'quota';
    if (status === 408) return 'timeout';
    if (status === 429) return 'rate_limit';
    if (status === 401 || status === 403) return 'auth';
    if (status >= 500) return 'server';
    if (code && CONTENT_FILTER_CODES.has(code)) return 'content_filter';
    if (status === 404 && isModelAccess(code, input.message)) return 'model_access';
    if (status === 400 && code !== undefined && MODEL_ACCESS_CODES.has(code)) return 'model_access';
    return 'client';
  }
  return isTimeoutError(input.error) ? 'timeout' : 'network';
}

function isQuota(code: string | undefined, message: string | undefined): boolean {
  if (code !== undefined && QUOTA_CODES.has(code)) return true;
  return message !== undefined && QUOTA_MESSAGE_RE.test(message);
}

function isModelAccess(code: string | undefined, message: string | undefined): boolean {
  if (code !== undefined && MODEL_ACCESS_CODES.has(code)) return true;
  return message !== undefined && MODEL_ACCESS_MESSAGE_RE.test(message);
}

/** The scope of each kind; a 408 (the upstream timed the request out) is transient, not the provider down. */
export function failureScope(kind: FailureKind, status?: number): FailureScope {
  switch (kind) {
    case 'network':
      return 'provider';
    case 'timeout':
      return status === 408 ? 'transient' : 'provider';
    case 'auth':
    case 'quota':
      return 'account';
    case 'rate_limit':
    case 'model_access':
    case 'content_filter':
      return 'model_on_account';
    case 'server':
    case 'empty':
      return 'transient';
    case 'client':
      return status === 408 ? 'transient' : 'request';
  }
}

const TIMEOUT_CODES = new Set([
  'ETIMEDOUT',
  'ESOCKETTIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** True for AbortSignal.timeout errors and socket/undici timeouts, looking through `cause` chains. */
function isTimeoutError(error: unknown): boolean {
  // Bounded walk: a cyclic cause chain must not hang the request path.
  for (let e = error, depth = 0; isRecord(e) && depth < 5; e = e.cause, depth++) {
    if (e.name === 'TimeoutError' || e.name === 'AbortError') return true;
    if (typeof e.code === 'string' && TIMEOUT_CODES.has(e.code)) return true;
  }
  return false;
}

/** Whether another account or target should be tried: every failure but one the request itself caused. */
export function isRetryable(kind: FailureKind, status?: number): boolean {
  return failureScope(kind, status) !== 'request';
}

/**
 * Whether the failure says the provider itself is unhealthy: network, timeout and 5xx. Anything with a
 * 4xx status (including 408 and 429) is not, since the provider answered.
 */
export function isBreakerEligible(kind: FailureKind, status?: number): boolean {
  if (status !== undefined && status >= 400 && status < 500) return false;
  return kind === 'network' || kind === 'timeout' || kind === 'server';
}
