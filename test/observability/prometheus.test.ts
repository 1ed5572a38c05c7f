/**
 * A real Prometheus server (Debian's `prometheus` package; .ci/run installs it) scrapes the daemon's
 * /metrics with a manage-scope key as its bearer token; PromQL through its HTTP API then returns the
 * request count and a latency quantile from the histogram buckets.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, script, setup, until, type Env } from '../resilience/helpers.js';

const PROMETHEUS = ['/usr/bin/prometheus', '/usr/local/bin/prometheus'].find((p) => existsSync(p));
if (!PROMETHEUS) console.warn('prometheus is not installed (apt-get install prometheus): test/observability/prometheus.test.ts is skipped');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

describe.skipIf(!PROMETHEUS)('a real Prometheus scrapes /metrics', () => {
  let env: Env;
  let prom: ChildProcess | undefined;
  let dir: string;
  let promUrl: string;
  let promLog = '';

  beforeAll(async () => {
    env = await setup({ providers: ['openai'] });
    script(env.mock);
    const manageKey = await env.router.createKey(['manage']);
    dir = mkdtempSync(join(tmpdir(), 'router-prom-'));
    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    const target = new URL(env.router.url).host;
    writeFileSync(
      join(dir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1s',
        'scrape_configs:',
        '  - job_name: router',
        '    metrics_path: /metrics',
        '    authorization:',
        '      type: Bearer',
        `      credentials: ${manageKey}`,
        '    static_configs:',
        `      - targets: ['${target}']`,
        '',
      ].join('\n'),
    );
    execFileSync(PROMETHEUS!, ['--version'], { stdio: 'ignore' });
    prom = spawn(PROMETHEUS!, [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    prom.stderr!.on('data', (c: Buffer) => (promLog = (promLog + c.toString()).slice(-4000)));
    await until(async () => (await fetch(`${promUrl}/-/ready`).catch(() => undefined))?.ok, 30_000, 200);
  }, 60_000);

  afterAll(async () => {
    if (prom && prom.exitCode === null) {
      const exited = new Promise((r) => prom!.once('exit', r));
      prom.kill('SIGTERM');
      await exited;
    }
    await env?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function query(q: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>> {
    const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(q)}`);
    const body = (await res.json()) as { status: string; data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> } };
    expect(body.status, JSON.stringify(body)).toBe('success');
    return body.data.result;
  }

  it('PromQL returns the request count and a histogram quantile after traffic', async () => {
    for (let i = 0; i < 5; i++) expect((await chat(env, 'openai/gpt-4o-mini')).status).toBe(200);
    const count = await until(async () => {
      const r = await query('sum(router_requests_total{provider="openai",status_class="2xx"})');
      return r.length && Number(r[0]!.value[1]) === 5 ? r : undefined;
    }, 30_000, 250).catch((err) => {
      throw new Error(`${(err as Error).message}; prometheus log: ${promLog}`);
    });
    expect(Number(count[0]!.value[1])).toBe(5);
    const up = await query('up{job="router"}');
    expect(up[0]!.value[1]).toBe('1');
    const p50 = await query('histogram_quantile(0.5, sum by (le) (router_request_duration_seconds_bucket{provider="openai"}))');
    const seconds = Number(p50[0]!.value[1]);
    expect(Number.isFinite(seconds)).toBe(true);
    expect(seconds).toBeGreaterThan(0);
    expect(seconds).toBeLessThan(5);
  }, 60_000);
});
