import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { readPidFile } from '../../src/shared/pidfile.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import type { MockUpstream } from '../mocks/upstream.js';

export { startRouter, type RouterProcess };

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A management call with a raw body and any headers (uploads, downloads). */
export async function raw(
  router: RouterProcess,
  method: string,
  path: string,
  init: { body?: Uint8Array | string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; bytes: Buffer; json: any }> {
  const res = await fetch(`${router.url}${path}`, {
    method,
    headers: { 'x-router-cli-token': router.cliToken, ...init.headers },
    body: init.body as BodyInit | undefined,
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  let json: any;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, bytes, json };
}

/**
 * Waits until the daemon of `home` is a new process (pid file names a pid other than `oldPid`) that
 * answers /api/health on `url`; returns its pid.
 */
export async function waitForRestart(home: string, url: string, oldPid: number, timeoutMs = 90_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const pid = existsSync(join(home, 'router.pid')) ? readPidFile(join(home, 'router.pid'))?.pid : undefined;
    if (pid && pid !== oldPid) {
      const ok = await fetch(`${url}/api/health`).then((r) => r.ok).catch(() => false);
      if (ok) return pid;
    }
    await sleep(50);
  }
  throw new Error(`the daemon in ${home} did not come back after a restart`);
}

/** One chat completion through the proxy with an API key. */
export function chat(router: RouterProcess, key: string, model: string, path = '/v1/chat/completions') {
  return fetch(`${router.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
}

/** An openai connection pointed at the mock, with a real-looking key that must reach it unchanged. */
export async function addOpenAi(router: RouterProcess, mock: MockUpstream, apiKey: string) {
  return router.addConnection({ provider: 'openai', name: 'main', apiKey, providerSpecificData: { baseUrl: mock.openaiBase } });
}
