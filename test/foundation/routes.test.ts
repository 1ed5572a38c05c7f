/**
 * The route table is data: every route has a tier, none is declared twice, the app serves exactly the
 * table, the OpenAPI document describes every route, and every response carries X-Router-Version.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootServices, buildApp, closeServices } from '../../src/daemon/boot.js';
import { createApp } from '../../src/daemon/http/app.js';
import { openApiPath } from '../../src/daemon/http/openapi.js';
import { TIERS, type RouteDef } from '../../src/daemon/http/routes.js';
import { ROUTES } from '../../src/daemon/routes.js';
import type { Services } from '../../src/daemon/services.js';
import { REPO_ROOT } from '../support/cli.js';

const PKG_VERSION: string = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).version;

let home: string;
let services: Services;
let app: ReturnType<typeof buildApp>;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'router-routes-'));
  services = await bootServices({ home, host: '127.0.0.1', port: 0 });
  app = buildApp(services);
});

afterAll(() => {
  if (services) closeServices(services);
  if (home) rmSync(home, { recursive: true, force: true });
});

const id = (r: { method: string; path?: string; route?: string }) => `${r.method} ${r.path ?? r.route}`;

/** A concrete URL path for a route: params become a uuid, catch-alls a two-segment value. */
function samplePath(path: string): string {
  return path
    .replace(/\/\*\*:\w+/g, '/a/b')
    .replace(/\/\*\*$/, '/a/b')
    .replace(/:\w+/g, '00000000-0000-4000-8000-000000000000');
}

describe('route table', () => {
  it('is not empty and every route has a known tier, a summary and a tag', () => {
    expect(ROUTES.length).toBeGreaterThan(0);
    for (const r of ROUTES) {
      expect(TIERS, id(r)).toContain(r.tier);
      expect(r.summary, id(r)).toBeTruthy();
      expect(r.tag, id(r)).toBeTruthy();
      expect(typeof r.handler, id(r)).toBe('function');
    }
  });

  it('declares no method and path twice', () => {
    const seen = ROUTES.map(id);
    const dupes = seen.filter((x, i) => seen.indexOf(x) !== i);
    expect(dupes).toEqual([]);
  });

  it('createApp refuses a duplicate method and path', () => {
    const r = ROUTES[0]!;
    expect(() => createApp([r, { ...r }] as RouteDef[], services)).toThrow(/twice/);
  });

  it('the h3 app serves exactly the routes of ROUTES, each with its tier', () => {
    const registered = (app as unknown as { '~routes': Array<{ method: string; route: string; meta?: { tier?: string } }> })['~routes'];
    expect(registered.map(id).sort()).toEqual(ROUTES.map(id).sort());
    const tierOf = new Map(ROUTES.map((r) => [id(r), r.tier]));
    for (const r of registered) expect(r.meta?.tier, id(r)).toBe(tierOf.get(id(r)));
  });
});

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1.0 with the package version, and lists every route with its method and tier', async () => {
    expect(PKG_VERSION).toMatch(/^\d+\.\d+\.\d+$/);
    const res = await app.request('http://router.test/api/openapi.json', {}, { remoteAddress: '203.0.113.1' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    const doc = (await res.json()) as {
      openapi: string;
      info: { version: string; title: string };
      paths: Record<string, Record<string, { 'x-router-tier'?: string; security?: unknown }>>;
      components?: { schemas?: Record<string, unknown>; securitySchemes?: Record<string, unknown> };
    };
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe(PKG_VERSION);
    const missing: string[] = [];
    // OpenAPI 3.1 has no operations for WebDAV's own methods (PROPFIND, MKCOL, MOVE of the note vault,
    // docs/vault.md): those routes are the only ones left out.
    const expressible = ROUTES.filter((r) => ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].includes(r.method));
    expect(ROUTES.filter((r) => !expressible.includes(r)).every((r) => r.path.startsWith('/api/v1/webdav'))).toBe(true);
    for (const r of expressible) {
      const op = doc.paths[openApiPath(r.path)]?.[r.method.toLowerCase()];
      if (!op) missing.push(id(r));
      else expect(op['x-router-tier'], id(r)).toBe(r.tier);
    }
    expect(missing).toEqual([]);
    // No operation the app does not serve.
    const documented = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
    expect(documented.sort()).toEqual(expressible.map((r) => `${r.method} ${openApiPath(r.path)}`).sort());
    expect(doc.components?.schemas?.Error).toBeDefined();
  });

  it('turns h3 params into OpenAPI templates', () => {
    expect(openApiPath('/api/keys/:id')).toBe('/api/keys/{id}');
    expect(openApiPath('/v1beta/models/**:model')).toBe('/v1beta/models/{model}');
  });
});

describe('X-Router-Version on every response', () => {
  it('is on every route reply (success and error), the 404 of an unknown path and a malformed URL', async () => {
    const cli = { 'x-router-cli-token': services.cliToken };
    const missing: string[] = [];
    const check = async (label: string, url: string, init: RequestInit, remoteAddress: string) => {
      const res = await app.request(`http://router.test${url}`, init, { remoteAddress });
      await res.arrayBuffer();
      if (res.headers.get('x-router-version') !== PKG_VERSION) missing.push(`${label} -> ${res.status}`);
      return res;
    };
    for (const r of ROUTES) {
      // The shutdown route's callback is a no-op in bootServices without requestShutdown.
      const url = samplePath(r.path);
      const body = r.method === 'GET' || r.method === 'DELETE' ? undefined : '{}';
      const headers: Record<string, string> = body ? { 'content-type': 'application/json' } : {};
      await check(`${id(r)} anonymous remote`, url, { method: r.method, headers, body }, '203.0.113.1');
      await check(`${id(r)} CLI token`, url, { method: r.method, headers: { ...headers, ...cli }, body }, '127.0.0.1');
    }
    const notFound = await check('unknown path', '/api/does-not-exist/at/all', {}, '127.0.0.1');
    expect(notFound.status).toBe(404);
    const malformed = await check('malformed URL', '/api/%E0%A4%A', {}, '127.0.0.1');
    expect(malformed.status).toBe(400);
    expect(missing).toEqual([]);
  });
});
