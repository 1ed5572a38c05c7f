/**
 * The dashboard's Cluster page (issue 29 item 6), in Chromium, against two real daemons on a real
 * PostgreSQL 15 and Redis 7: the nodes with address, version, last heartbeat and health, the database and
 * Redis health with the password masked, the modules shared and per node; a killed node turns unhealthy
 * and is removed from the page. On one machine the page says single machine. Skipped without Chromium,
 * PostgreSQL or Redis.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterUnavailable, startCluster, type ClusterUnderTest } from '../support/cluster.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

const CHROMIUM =
  process.env.ROUTER_TEST_NO_BROWSER === '1' ? undefined : ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const missing = CHROMIUM ? clusterUnavailable({ redis: true }) : 'Chromium not found';
const PASSWORD = 'cluster-page-pass-1';
const DB_PASSWORD = 'db-s3cret-word';

let cluster: ClusterUnderTest;
let single: RouterProcess;
let browser: Browser;
let page: Page;

describe.skipIf(missing)(`the Cluster page${missing ? ` (skipped: ${missing})` : ''}`, () => {
  beforeAll(async () => {
    cluster = await startCluster({ nodes: 2, redis: true, userInfo: `postgres:${DB_PASSWORD}` });
    single = await startRouter();
    const [a] = cluster.nodes;
    expect((await a!.manage('PUT', '/api/auth/password', { password: PASSWORD })).status).toBe(204);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.setDefaultTimeout(8000);
    await page.goto(a!.url);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await single?.stop();
    await cluster?.stop();
  }, 60_000);

  it('lists both nodes, the stores with the password masked, and the modules shared and per node', async () => {
    const [a, b] = cluster.nodes;
    await page.getByRole('link', { name: 'Cluster' }).click();
    await page.getByRole('heading', { name: 'Nodes' }).waitFor();
    const nodes = page.locator('section[aria-label="Nodes"]');
    const rowA = nodes.getByRole('row').filter({ hasText: 'node-1 (this node)' });
    const rowB = nodes.getByRole('row').filter({ hasText: 'node-2' });
    await expect.poll(() => rowB.textContent()).toContain('healthy');
    expect(await rowA.textContent()).toContain(a!.url);
    expect(await rowA.textContent()).toMatch(/\d+\.\d+\.\d+/);
    expect(await rowA.textContent()).toMatch(/\d+ s ago/);
    expect(await rowB.textContent()).toContain(b!.url);
    expect(await rowB.getByRole('button', { name: 'Remove' }).count()).toBe(0);
    const shared = page.locator('section[aria-label="Shared state"]');
    const text = (await shared.textContent()) ?? '';
    expect(text).toMatch(/Databasepostgres postgres:\/\/postgres:\*\*\*\*@127\.0\.0\.1:\d+\/\S+healthy/);
    expect(text).toMatch(/Redisredis:\/\/127\.0\.0\.1:\d+healthy/);
    expect(await page.content()).not.toContain(DB_PASSWORD);
    const modules = (await page.locator('section[aria-label="Modules"]').textContent()) ?? '';
    expect(modules).toMatch(/Shared \(in the database, the same on every node\): .*keys/);
    expect(modules).toMatch(/Per node \(each node's own SQLite file\): .*response cache/);
  });

  it('a killed node turns unhealthy on the page, and Remove takes it off the list', async () => {
    const [a, b] = cluster.nodes;
    await (b as { kill(): Promise<void> }).kill();
    const rowB = page.locator('section[aria-label="Nodes"]').getByRole('row').filter({ hasText: 'node-2' });
    await expect.poll(() => rowB.textContent(), { timeout: 40_000, interval: 500 }).toContain('unhealthy');
    await rowB.getByRole('button', { name: 'Remove' }).click();
    await expect.poll(() => rowB.count()).toBe(0);
    const ids = ((await a!.manage('GET', '/api/cluster')).json.nodes as Array<{ nodeId: string }>).map((n) => n.nodeId);
    expect(ids).toEqual(['node-1']);
  }, 60_000);

  it('on one machine the page says single machine', async () => {
    expect((await single.manage('PUT', '/api/auth/password', { password: PASSWORD })).status).toBe(204);
    const other = await browser.newPage();
    other.setDefaultTimeout(8000);
    await other.goto(single.url);
    await other.getByLabel('Password').fill(PASSWORD);
    await other.getByRole('button', { name: 'Log in' }).click();
    await other.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
    await other.getByRole('link', { name: 'Cluster' }).click();
    await other.getByRole('heading', { name: 'Single machine' }).waitFor();
    expect(await other.locator('main').textContent()).toContain(`This router is a single machine (node ${(await single.manage('GET', '/api/cluster')).json.nodeId})`);
    expect(await other.getByRole('heading', { name: 'Nodes' }).count()).toBe(0);
    await other.close();
  });
});
