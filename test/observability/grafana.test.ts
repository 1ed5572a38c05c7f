/**
 * The Grafana dashboard shipped in docs/grafana/ queries only metric families the daemon exports: every
 * name in every panel's PromQL appears in a real daemon's /metrics.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { REPO_ROOT } from '../support/cli.js';

let router: RouterProcess;
beforeAll(async () => {
  router = await startRouter();
}, 30_000);
afterAll(async () => {
  await router?.stop();
});

it('every metric a dashboard panel queries exists in /metrics', async () => {
  const dashboard = JSON.parse(readFileSync(`${REPO_ROOT}/docs/grafana/router-dashboard.json`, 'utf8'));
  const exprs: string[] = dashboard.panels.flatMap((p: { targets: Array<{ expr: string }> }) => p.targets.map((t) => t.expr));
  expect(exprs.length).toBeGreaterThan(10);
  const names = new Set(exprs.flatMap((e) => e.match(/\b(?:router|process|nodejs)_[a-z0-9_]+/g) ?? []));
  const res = await fetch(`${router.url}/metrics`, { headers: { 'x-router-cli-token': router.cliToken } });
  expect(res.status).toBe(200);
  const exported = new Set([...(await res.text()).matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!));
  const missing = [...names].filter((n) => !exported.has(n) && !exported.has(n.replace(/_(bucket|sum|count)$/, '')));
  expect(missing).toEqual([]);
});
