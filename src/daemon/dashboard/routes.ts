import type { H3Event } from 'h3';
import { FastResponse } from 'srvx';
import { HEADER } from '../../shared/headers.js';
import { VERSION } from '../../shared/version.js';
import { RouterError } from '../http/errors.js';
import { route, type RouteDef } from '../http/routes.js';
import { type Asset, DashboardAssets, TYPES as ASSET_TYPES } from './assets.js';
import { rawReply } from '../http/replies.js';

/**
 * The content-security policy of every dashboard page: scripts, styles, images and connections from
 * router's own origin only (`connect-src 'self'` covers the same-origin live WebSocket), no inline script,
 * no framing, no plugins. The built HTML has no inline script or style (test/dashboard/security.test.ts).
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': DASHBOARD_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

const assets = new DashboardAssets();

/** br when the client takes it, else gzip, else the plain file; the choice varies by Accept-Encoding. */
function encodingFor(event: H3Event, asset: Asset): { body: Buffer; encoding?: string } {
  const accept = event.req.headers.get('accept-encoding') ?? '';
  if (asset.br && /\bbr\b/.test(accept)) return { body: asset.br, encoding: 'br' };
  if (asset.gzip && /\bgzip\b/.test(accept)) return { body: asset.gzip, encoding: 'gzip' };
  return { body: asset.body };
}

function send(event: H3Event, asset: Asset, cacheControl: string): Response {
  const headers: Record<string, string> = {
    ...SECURITY_HEADERS,
    'content-type': asset.type,
    'cache-control': cacheControl,
    etag: asset.etag,
    vary: 'Accept-Encoding',
    [HEADER.version]: VERSION,
  };
  if (event.req.headers.get('if-none-match') === asset.etag) return new FastResponse(null, { status: 304, headers });
  const { body, encoding } = encodingFor(event, asset);
  if (encoding) headers['content-encoding'] = encoding;
  headers['content-length'] = String(body.length);
  return new FastResponse(body as unknown as BodyInit, { status: 200, headers });
}

const HTML = rawReply('text/html');

const NOT_BUILT = 'The dashboard is not built in this installation: run `npm run build` (npm ci does it), then reload.';

/** The app's HTML: the same page for `/` and every `/dashboard/...` deep link (the app routes in the browser). */
async function page(event: H3Event): Promise<Response> {
  const files = await assets.files();
  const html = files?.get('/index.html');
  if (!html) throw new RouterError(503, NOT_BUILT);
  return send(event, html, 'no-cache');
}

/** The web dashboard (CONTRACT "Wave two": `/`, deep links under `/dashboard/`, assets under `/assets/`). */
export const dashboardRoutes: RouteDef[] = [
  route({ method: 'GET', path: '/', tier: 'public', tag: 'dashboard', summary: 'The web dashboard (HTML; log in with the password)', reply: HTML, handler: ({ event }) => page(event) }),
  route({ method: 'GET', path: '/dashboard', tier: 'public', tag: 'dashboard', summary: 'The web dashboard (HTML)', reply: HTML, handler: ({ event }) => page(event) }),
  route({
    method: 'GET',
    path: '/dashboard/**',
    tier: 'public',
    tag: 'dashboard',
    summary: 'A dashboard page by its address (the same HTML; the page is chosen in the browser)',
    reply: HTML,
    handler: ({ event }) => page(event),
  }),
  route({
    method: 'GET',
    path: '/assets/**:file',
    tier: 'public',
    tag: 'dashboard',
    summary: 'The dashboard\'s built scripts and styles (content-hashed names, cached for a year; br/gzip)',
    reply: rawReply(...new Set(Object.values(ASSET_TYPES).map((t) => t.split(';')[0]!)), 'application/octet-stream'),
    handler: async ({ event, params }) => {
      const files = await assets.files();
      if (!files) throw new RouterError(503, NOT_BUILT);
      const asset = files.get(`/assets/${params.file}`);
      if (!asset) throw new RouterError(404, 'No such dashboard asset.');
      return send(event, asset, 'public, max-age=31536000, immutable');
    },
  }),
];
