/**
 * Issue 15 item 7: `router logs -f` misses nothing across a daemon restart. A request made while the CLI
 * was disconnected (its live channel waiting out the reconnect backoff) reaches it through the backfill
 * from /api/logs once it reconnects, printed once. Real processes: the CLI without a terminal, the daemon
 * stopped and started again on the same home and port.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { BIN, REPO_ROOT } from '../support/cli.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function chat(router: RouterProcess, key: string, model: string) {
  const res = await fetch(`${router.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }] }),
  });
  await res.text();
  return res.status;
}

async function until(what: string, pred: () => boolean, ms = 20_000) {
  const deadline = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('logs -f across a daemon restart', () => {
  it('a request made before the CLI reconnected is printed once, from the request log', { timeout: 120_000 }, async () => {
    const home = mkdtempSync(join(tmpdir(), 'router-restart-feed-'));
    const configDir = mkdtempSync(join(tmpdir(), 'router-restart-config-'));
    cleanups.push(() => rmSync(home, { recursive: true, force: true }), () => rmSync(configDir, { recursive: true, force: true }));
    const mock: MockUpstream = await startMockUpstream();
    cleanups.push(() => mock.close());
    let router = await startRouter({ home });
    cleanups.push(() => router.stop());
    await router.addConnection({ provider: 'openai', apiKey: 'sk-feed-0123456789', providerSpecificData: { baseUrl: mock.openaiBase } });
    const key = await router.createKey(['proxy']);

    const cli = execa(process.execPath, [BIN, 'logs', '-f', '--json', '--home', home], {
      cwd: REPO_ROOT,
      reject: false,
      stdin: 'ignore',
      env: { ROUTER_CLI_CONFIG_DIR: configDir },
    });
    cleanups.push(() => cli.kill('SIGKILL'));
    const lines: string[] = [];
    let reconnectedAt = 0;
    let reconnecting = false;
    let out = '';
    cli.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const parts = out.split('\n');
      out = parts.pop()!;
      lines.push(...parts.filter(Boolean));
    });
    cli.stderr!.on('data', (c: Buffer) => {
      if (/reconnected/.test(c.toString()) && !reconnectedAt) reconnectedAt = Date.now();
      else if (/^router: /m.test(c.toString())) reconnecting = true;
    });
    const models = () => lines.map((l) => JSON.parse(l).model as string);

    await new Promise((r) => setTimeout(r, 1_000));
    expect(await chat(router, key, 'openai/gpt-4o-mini')).toBe(200);
    await until('the first request', () => models().includes('gpt-4o-mini'));

    const port = router.port;
    await router.stop();
    // The CLI has lost the daemon and is retrying; it is paused (SIGSTOP) while the daemon comes back and
    // serves a request, so that request is made before the CLI reconnects however slow the machine is.
    await until('the CLI retrying', () => reconnecting, 30_000);
    process.kill(cli.pid!, 'SIGSTOP');
    cleanups.push(() => {
      try {
        process.kill(cli.pid!, 'SIGCONT');
      } catch {
        // already gone
      }
    });
    router = await startRouter({ home, port });
    expect(await chat(router, key, 'openai/gpt-4.1')).toBe(200);
    const madeAt = Date.now();
    process.kill(cli.pid!, 'SIGCONT');
    await until('the request made during the gap', () => models().includes('gpt-4.1'), 30_000);
    // It was made before the CLI reconnected: only the backfill could have brought it.
    expect(reconnectedAt).toBeGreaterThan(0);
    expect(madeAt).toBeLessThan(reconnectedAt);
    await new Promise((r) => setTimeout(r, 3_500)); // the late second backfill must not print it again
    expect(models().filter((m) => m === 'gpt-4.1')).toHaveLength(1);
    expect(models().filter((m) => m === 'gpt-4o-mini')).toHaveLength(1);
    cli.kill('SIGTERM');
    expect((await cli).exitCode).toBe(0);
  });
});
