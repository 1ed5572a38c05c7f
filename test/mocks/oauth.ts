/**
 * A mock authorization server (and the setup APIs router calls after a login) for the OAuth providers:
 * browser logins with PKCE S256 (`GET /authorize` issues a code for the challenge and redirects to the
 * redirect URI, like a provider after the user agreed), the token endpoint (authorization_code with the
 * verifier checked, refresh_token with rotation, the RFC 8628 device grant with scripted answers),
 * the device authorization endpoint, GitHub's Copilot token exchange and Google's Code Assist API
 * (loadCodeAssist, onboardUser, generateContent and streamGenerateContent in their envelopes).
 * Nothing here calls a real provider. See README.md ("OAuth mock").
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isDeepStrictEqual } from 'node:util';

export interface OAuthMockRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Form or JSON body fields. */
  fields: Record<string, unknown>;
}

export interface OAuthMockOptions {
  /** access_token lifetime the token endpoint announces, seconds. */
  expiresIn?: number;
  /** Delay of refresh-grant replies, ms (concurrency tests). */
  refreshDelayMs?: number;
  /** Extra fields of every token reply (`resource_url`...). */
  tokenExtra?: Record<string, unknown>;
  /** ChatGPT account id put in the id_token (Codex). */
  chatgptAccountId?: string;
  /** `endpoints.api` of Copilot tokens. */
  copilotApi?: string;
  /** Copilot token lifetime, seconds. */
  copilotTtl?: number;
  /** The project loadCodeAssist names; null: none, so onboardUser runs. */
  codeAssistProject?: string | null;
}

export interface OAuthMock {
  url: string;
  requests: OAuthMockRequest[];
  /** Refresh-grant calls received. */
  refreshCalls: number;
  /** Copilot token exchanges received. */
  copilotExchanges: number;
  /** Answers for the device grant, in order (then `ok`): `authorization_pending`, `slow_down`, `expired_token`, `access_denied`, `ok`. */
  deviceScript: string[];
  /** When set, refresh grants fail with this status and `invalid_grant`. */
  refreshFailStatus?: number;
  /** Access tokens currently valid (issued and not replaced). */
  validAccess: Set<string>;
  /** Code Assist generate calls still to refuse with 401 although their token is valid (a momentary auth refusal). */
  generateAuthFailures: number;
  options: OAuthMockOptions;
  /** A PKCE pair for a code issued without a browser round trip. */
  issueCode(challenge: string, redirectUri: string): string;
  close(): Promise<void>;
}

const s256 = (v: string) => createHash('sha256').update(v).digest('base64url');
const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function parseFields(req: IncomingMessage, body: string): Record<string, unknown> {
  if (!body) return {};
  if (String(req.headers['content-type']).includes('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(body));
  try {
    return JSON.parse(body) as Record<string, unknown>;
  } catch {
    return {};
  }
}

const CODE_ASSIST_REPLY = {
  candidates: [{ content: { role: 'model', parts: [{ text: 'Hello from Code Assist.' }] }, finishReason: 'STOP', index: 0 }],
  usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 4, totalTokenCount: 9 },
  modelVersion: 'gemini-2.5-pro',
};

const CLIENT_METADATA = { ideType: 'IDE_UNSPECIFIED', platform: 'PLATFORM_UNSPECIFIED', pluginType: 'GEMINI' };

/**
 * What is wrong with a loadCodeAssist body, against the one Gemini CLI sends (gemini-cli
 * packages/core/src/code_assist/setup.ts `_doSetupUser`): `{cloudaicompanionProject?, metadata:
 * {ideType, platform, pluginType, duetProject?}}`, the project in both places or in neither.
 */
function loadCodeAssistProblem(f: Record<string, unknown>): string | undefined {
  const known = new Set(['cloudaicompanionProject', 'metadata', 'mode']);
  const extra = Object.keys(f).filter((k) => !known.has(k));
  if (extra.length) return `Invalid JSON payload received. Unknown name "${extra[0]}"`;
  const project = f.cloudaicompanionProject;
  const expected = { ...CLIENT_METADATA, ...(project !== undefined ? { duetProject: project } : {}) };
  if (!isDeepStrictEqual(f.metadata, expected)) return `metadata must be ${JSON.stringify(expected)}, got ${JSON.stringify(f.metadata)}`;
  return undefined;
}

/**
 * What is wrong with the client headers of a Code Assist call. Gemini CLI (gemini-cli v0.56.0
 * packages/core/src/core/contentGenerator.ts, with google-auth-library's interceptor appending its own
 * product and setting `x-goog-api-client`) sends `GeminiCLI/<version>/<model> (<platform>; <arch>;
 * <surface>) google-api-nodejs-client/<version>` and `x-goog-api-client: gl-node/<node version>`; on a
 * generate call the model in the user agent is the body's. Antigravity's are checked by antigravityProblem.
 */
function codeAssistClientProblem(req: OAuthMockRequest, method: string): string | undefined {
  const ua = String(req.headers['user-agent'] ?? '');
  if (ua.startsWith('antigravity/')) return undefined;
  const m = /^GeminiCLI\/\d+\.\d+\.\d+\/([\w.:-]+) \((\w+); (\w+); (\w+)\) google-api-nodejs-client\/\d+\.\d+\.\d+$/.exec(ua);
  if (!m) return `mock: user-agent ${JSON.stringify(ua)} is not Gemini CLI's or Antigravity's`;
  if (!/^gl-node\/\d+\.\d+\.\d+$/.test(String(req.headers['x-goog-api-client'] ?? ''))) return `mock: x-goog-api-client must be gl-node/<version>`;
  if (method.endsWith('enerateContent') && m[1] !== req.fields.model) return `mock: user-agent names model ${m[1]}, the body ${String(req.fields.model)}`;
  return undefined;
}

export async function startOAuthMock(options: OAuthMockOptions = {}): Promise<OAuthMock> {
  const codes = new Map<string, { challenge: string; redirectUri: string }>();
  const devices = new Map<string, { challenge?: string }>();
  const liveRefresh = new Set<string>();
  let n = 0;
  const mock = {
    url: '',
    requests: [] as OAuthMockRequest[],
    refreshCalls: 0,
    copilotExchanges: 0,
    deviceScript: [] as string[],
    refreshFailStatus: undefined as number | undefined,
    validAccess: new Set<string>(),
    generateAuthFailures: 0,
    options,
  } as OAuthMock;

  const tokens = (kind: string, extra: Record<string, unknown> = {}) => {
    n++;
    const access = `${kind}-at-${n}`;
    const refresh = `${kind}-rt-${n}`;
    mock.validAccess.add(access);
    liveRefresh.add(refresh);
    const idToken = `${b64({ alg: 'none' })}.${b64({ email: 'user@example.com', 'https://api.openai.com/auth': { chatgpt_account_id: options.chatgptAccountId ?? 'acct-123' } })}.sig`;
    return { access_token: access, refresh_token: refresh, expires_in: options.expiresIn ?? 3600, token_type: 'Bearer', id_token: idToken, ...options.tokenExtra, ...extra };
  };

  mock.issueCode = (challenge, redirectUri) => {
    const code = `code-${++n}`;
    codes.set(code, { challenge, redirectUri });
    return code;
  };

  async function token(res: ServerResponse, f: Record<string, unknown>): Promise<void> {
    const grant = f.grant_type;
    if (grant === 'authorization_code') {
      const issued = codes.get(String(f.code));
      codes.delete(String(f.code));
      if (!issued) return send(res, 400, { error: 'invalid_grant', error_description: 'unknown or used code' });
      if (s256(String(f.code_verifier ?? '')) !== issued.challenge) return send(res, 400, { error: 'invalid_grant', error_description: 'code_verifier does not match' });
      if (f.redirect_uri !== issued.redirectUri) return send(res, 400, { error: 'invalid_grant', error_description: 'redirect_uri mismatch' });
      return send(res, 200, tokens('login', { account: { email_address: 'user@example.com' } }));
    }
    if (grant === 'refresh_token') {
      mock.refreshCalls++;
      if (options.refreshDelayMs) await new Promise((r) => setTimeout(r, options.refreshDelayMs));
      const rt = String(f.refresh_token);
      if (mock.refreshFailStatus) return send(res, mock.refreshFailStatus, { error: 'invalid_grant', error_description: 'refresh token revoked' });
      if (!liveRefresh.has(rt)) return send(res, 400, { error: 'invalid_grant', error_description: 'refresh token already used' });
      liveRefresh.delete(rt);
      return send(res, 200, tokens('refreshed'));
    }
    if (grant === 'urn:ietf:params:oauth:grant-type:device_code') {
      const device = devices.get(String(f.device_code));
      if (!device) return send(res, 400, { error: 'invalid_grant' });
      if (device.challenge && s256(String(f.code_verifier ?? '')) !== device.challenge) return send(res, 400, { error: 'invalid_grant', error_description: 'code_verifier does not match' });
      const next = mock.deviceScript.shift() ?? 'ok';
      if (next !== 'ok') return send(res, 400, { error: next });
      devices.delete(String(f.device_code));
      return send(res, 200, tokens('device'));
    }
    send(res, 400, { error: 'unsupported_grant_type' });
  }

  /**
   * Every v1internal method is a POST with a JSON body (gemini-cli packages/core/src/code_assist/server.ts:
   * `requestPost`, `requestStreamingPost`); any other method is not routed (Google answers 404 before
   * looking at the credential).
   */
  function codeAssist(req: OAuthMockRequest, res: ServerResponse): void {
    const method = req.path.split(':')[1];
    if (req.method !== 'POST' || !String(req.headers['content-type']).startsWith('application/json')) {
      return send(res, 404, { error: { code: 404, message: `${req.method} ${req.path} is not a method of this API`, status: 'NOT_FOUND' } });
    }
    const auth = String(req.headers.authorization ?? '');
    if (!mock.validAccess.has(auth.replace(/^Bearer /, ''))) return send(res, 401, { error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' } });
    const client = codeAssistClientProblem(req, method ?? '');
    if (client) return send(res, 400, { error: { code: 400, message: client, status: 'INVALID_ARGUMENT' } });
    if (method === 'loadCodeAssist') {
      const bad = loadCodeAssistProblem(req.fields);
      if (bad) return send(res, 400, { error: { code: 400, message: bad, status: 'INVALID_ARGUMENT' } });
      const project = options.codeAssistProject === undefined ? 'proj-loaded' : options.codeAssistProject;
      return send(res, 200, { currentTier: project ? { id: 'free-tier' } : undefined, allowedTiers: [{ id: 'free-tier', isDefault: true }], ...(project ? { cloudaicompanionProject: project } : {}) });
    }
    if (method === 'onboardUser') return send(res, 200, { name: 'op-1', done: true, response: { cloudaicompanionProject: { id: 'proj-onboarded', name: 'Onboarded' } } });
    if ((method === 'generateContent' || method === 'streamGenerateContent') && mock.generateAuthFailures > 0) {
      mock.generateAuthFailures--;
      return send(res, 401, { error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' } });
    }
    if (method === 'generateContent') return send(res, 200, { response: CODE_ASSIST_REPLY, traceId: 't-1' });
    if (method === 'streamGenerateContent') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const parts = ['Hello from ', 'Code Assist.'];
      parts.forEach((text, i) => {
        const chunk = { candidates: [{ content: { role: 'model', parts: [{ text }] }, ...(i === parts.length - 1 ? { finishReason: 'STOP' } : {}) }], ...(i === parts.length - 1 ? { usageMetadata: CODE_ASSIST_REPLY.usageMetadata } : {}) };
        res.write(`data: ${JSON.stringify({ response: chunk })}\r\n\r\n`);
      });
      res.end();
      return;
    }
    send(res, 404, { error: { code: 404, message: 'not found', status: 'NOT_FOUND' } });
  }

  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const r: OAuthMockRequest = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, headers: req.headers, body, fields: parseFields(req, body) };
      mock.requests.push(r);
      const q = url.searchParams;
      if (r.path === '/authorize') {
        const redirect = new URL(q.get('redirect_uri') ?? '');
        if (q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge')) redirect.searchParams.set('error', 'invalid_request');
        else redirect.searchParams.set('code', mock.issueCode(q.get('code_challenge')!, q.get('redirect_uri')!));
        redirect.searchParams.set('state', q.get('state') ?? '');
        res.writeHead(302, { location: redirect.toString() });
        return res.end();
      }
      if (r.path === '/token') return void token(res, r.fields);
      if (r.path === '/device/code') {
        const dc = `dc-${++n}`;
        devices.set(dc, { challenge: typeof r.fields.code_challenge === 'string' ? r.fields.code_challenge : undefined });
        return send(res, 200, { device_code: dc, user_code: 'ABCD-1234', verification_uri: `${mock.url}/device`, expires_in: 600, interval: 1 });
      }
      if (r.path === '/copilot_internal/v2/token') {
        mock.copilotExchanges++;
        // The editor identity public Copilot clients send with the exchange (ericc-ch/copilot-api
        // src/lib/api-config.ts `githubHeaders`): refused here without it, so a regression shows.
        for (const h of ['editor-version', 'editor-plugin-version', 'user-agent', 'x-github-api-version']) {
          if (!req.headers[h]) return send(res, 400, { message: `mock: the Copilot token exchange needs ${h}` });
        }
        const gh = String(req.headers.authorization ?? '').replace(/^token /, '');
        if (!mock.validAccess.has(gh) && !gh.startsWith('gho_')) return send(res, 401, { message: 'Bad credentials' });
        const token = `cop-${++n}`;
        mock.validAccess.add(token);
        const ttl = options.copilotTtl ?? 1800;
        return send(res, 200, { token, expires_at: Math.floor(Date.now() / 1000) + ttl, refresh_in: ttl - 300, endpoints: { api: options.copilotApi ?? mock.url } });
      }
      if (r.path.startsWith('/v1internal:')) return codeAssist(r, res);
      send(res, 404, { error: 'not_found' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  mock.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  mock.close = () =>
    new Promise((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return mock;
}

/** The oauthEndpoints setting entry that points a provider at this mock. */
export function mockEndpoints(mock: OAuthMock, apiBaseUrl?: string) {
  return {
    authorizeUrl: `${mock.url}/authorize`,
    tokenUrl: `${mock.url}/token`,
    deviceAuthorizationUrl: `${mock.url}/device/code`,
    apiBaseUrl: apiBaseUrl ?? mock.url,
  };
}
