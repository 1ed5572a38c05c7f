/**
 * `router doctor` end to end: the real CLI and daemon (started with `router start` in a fresh HOME), a
 * coding agent configured through `router config-tool`, accounts on mock upstreams. It passes, then names
 * each thing that breaks: the agent's settings, its key, an account's upstream error, the clock, the state
 * folder's modes, a stopped daemon; and the disk check against its threshold.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveCliToken } from '../../src/shared/cli-token.js';
import { diskFinding } from '../../src/daemon/doctor/checks.js';
import type { DoctorReply } from '../../src/shared/doctor.js';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { describeResult, freePort, killDaemonOf, runRouter } from '../support/cli.js';

let home: string;
let port: number;
let mock: MockUpstream;
let env: Record<string, string>;
const router = (args: string[], input?: string) => runRouter([...args, '--port', String(port)], { env, input, timeoutMs: 60_000 });

async function doctor(): Promise<{ exitCode: number; reply: DoctorReply; text: string }> {
  const json = await router(['doctor', '--json']);
  const human = await router(['doctor']);
  expect(human.exitCode, describeResult(human)).toBe(json.exitCode);
  return { exitCode: json.exitCode, reply: JSON.parse(json.stdout) as DoctorReply, text: human.stdout };
}

const failed = (r: DoctorReply) => r.findings.filter((f) => f.status === 'fail');
const settingsFile = () => join(home, '.claude', 'settings.json');

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'router-doctor-'));
  port = await freePort();
  env = { HOME: home, ROUTER_KEYCHAIN_BACKEND: 'none' };
  mock = await startMockUpstream();
  const ok = async (args: string[], input?: string) => {
    const r = await router(args, input);
    expect(r.exitCode, describeResult(r)).toBe(0);
    return r.stdout;
  };
  await ok(['start']);
  await ok(['providers', 'add', 'openai', '--api-key-stdin', '--base-url', mock.openaiBase], 'sk-test-openai');
  await ok(['config-tool', 'claude-code', '--model', 'openai/gpt-4o', '--yes']);
}, 90_000);

afterAll(async () => {
  await runRouter(['stop', '--port', String(port)], { env }).catch(() => undefined);
  await killDaemonOf(join(home, '.router'));
  await mock?.close();
  rmSync(home, { recursive: true, force: true });
});

describe('router doctor', () => {
  it('passes on a working setup, one line per finding', async () => {
    const { exitCode, reply, text } = await doctor();
    expect(failed(reply), text).toEqual([]);
    expect(exitCode, text).toBe(0);
    expect(reply.ok).toBe(true);
    expect(reply.url).toBe(`http://127.0.0.1:${port}`);
    const checks = reply.findings.map((f) => f.check);
    for (const c of ['daemon', 'agent', 'account', 'clock', 'disk', 'state-folder']) expect(checks, text).toContain(c);
    const agent = reply.findings.find((f) => f.check === 'agent')!;
    expect(agent).toMatchObject({ status: 'pass' });
    expect(agent.subject).toContain('Claude Code');
    // The mock answers with its Date header: the clock was measured, not skipped.
    expect(reply.findings.find((f) => f.check === 'clock')?.status).toBe('pass');
    expect(text.trim().split('\n').filter((l) => /^(ok|FAIL|skip) /.test(l))).toHaveLength(reply.findings.length);
    expect(text).toContain('all checks passed');
  });

  it("names an agent whose settings no longer point at router, with the fix", async () => {
    const before = readFileSync(settingsFile(), 'utf8');
    const other = await freePort();
    writeFileSync(settingsFile(), before.replace(`127.0.0.1:${port}`, `127.0.0.1:${other}`));
    try {
      const { exitCode, reply, text } = await doctor();
      expect(exitCode, text).toBe(1);
      const f = failed(reply);
      expect(f, text).toHaveLength(1);
      expect(f[0]).toMatchObject({ check: 'agent', status: 'fail' });
      expect(f[0]!.message).toContain(`127.0.0.1:${other}`);
      expect(f[0]!.fix).toContain('router setup');
      expect(text).toMatch(/^FAIL {2}agent Claude Code .*-> fix: run `router setup`/m);
    } finally {
      writeFileSync(settingsFile(), before);
    }
  });

  it('names a key router no longer accepts', async () => {
    const key = (JSON.parse(readFileSync(settingsFile(), 'utf8')) as { env: Record<string, string> }).env.ANTHROPIC_AUTH_TOKEN!;
    const keys = JSON.parse((await router(['keys', 'list', '--json'])).stdout) as Array<{ id: string; maskedKey: string }>;
    const id = keys.find((k) => k.maskedKey.endsWith(key.slice(-4)))!.id;
    expect((await router(['keys', 'rm', id])).exitCode).toBe(0);
    const { exitCode, reply, text } = await doctor();
    expect(exitCode, text).toBe(1);
    expect(failed(reply).map((f) => f.message).join('\n')).toContain("not one of router's keys");
    // Point it at router again with a new key: the doctor passes again.
    expect((await router(['config-tool', 'claude-code', '--model', 'openai/gpt-4o', '--yes'])).exitCode).toBe(0);
    expect((await doctor()).exitCode).toBe(0);
  });

  it("names an account whose upstream refused it, with the upstream's reason", async () => {
    const off = mock.handle((req) => (req.headers.authorization === 'Bearer sk-refused' ? { type: 'status', status: 401, message: 'Incorrect API key provided: sk-ref***' } : undefined));
    try {
      const added = await router(['providers', 'add', 'openrouter', '--api-key-stdin', '--base-url', mock.openaiBase, '--json'], 'sk-refused');
      expect(added.exitCode, describeResult(added)).toBe(0);
      const id = (JSON.parse(added.stdout) as { id: string }).id;
      await router(['providers', 'test', id]);
      const { exitCode, reply, text } = await doctor();
      expect(exitCode, text).toBe(1);
      const f = failed(reply);
      expect(f, text).toHaveLength(1);
      expect(f[0]).toMatchObject({ check: 'account' });
      expect(f[0]!.subject).toContain(id);
      expect(f[0]!.message).toContain('Incorrect API key provided');
      expect(f[0]!.fix).toContain(`router providers rm ${id}`);
      expect((await router(['providers', 'rm', id])).exitCode).toBe(0);
    } finally {
      off();
    }
  });

  /** Adds an OAuth login through the management API as the CLI calls it (its token depends on the daemon's HOME). */
  async function addLogin(body: Record<string, unknown>): Promise<string> {
    const prev = process.env.HOME;
    process.env.HOME = home;
    const token = deriveCliToken(join(home, '.router', 'cli-token.salt'))!;
    process.env.HOME = prev;
    const res = await fetch(`http://127.0.0.1:${port}/api/providers`, {
      method: 'POST',
      headers: { 'x-router-cli-token': token, 'content-type': 'application/json' },
      body: JSON.stringify({ provider: 'claude-code', ...body }),
    });
    expect(res.status, await res.clone().text()).toBe(201);
    return ((await res.json()) as { id: string }).id;
  }

  it('names a login whose token expired with no refresh token', async () => {
    const id = await addLogin({ accessToken: 'sk-ant-oat01-old', expiresAt: '2020-01-01T00:00:00Z' });
    try {
      const { exitCode, reply, text } = await doctor();
      expect(exitCode, text).toBe(1);
      expect(failed(reply)).toEqual([
        expect.objectContaining({ check: 'account', message: 'token expired at 2020-01-01T00:00:00.000Z and there is no refresh token', fix: expect.stringContaining('router login claude-code') }),
      ]);
    } finally {
      await router(['providers', 'rm', id]);
    }
  });

  it("shows each login's token freshness: valid until, or expired and renewed with its refresh token on next use", async () => {
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const fresh = await addLogin({ name: 'fresh', accessToken: 'sk-ant-oat01-fresh', expiresAt: until });
    const renewable = await addLogin({ name: 'renewable', accessToken: 'sk-ant-oat01-stale', refreshToken: 'sk-ant-ort01-r', expiresAt: '2020-01-01T00:00:00Z' });
    try {
      const { reply, text } = await doctor();
      const of = (id: string) => reply.findings.find((f) => f.check === 'account' && f.subject?.includes(id));
      expect(of(fresh), text).toMatchObject({ status: 'pass', message: expect.stringContaining(`token valid until ${until}`) });
      expect(of(renewable), text).toMatchObject({ status: 'pass', message: expect.stringContaining('token expired at 2020-01-01T00:00:00.000Z, renewed with its refresh token on next use') });
      expect(text).toMatch(new RegExp(`^ok +account .*${fresh}.*token valid until`, 'm'));
    } finally {
      await router(['providers', 'rm', fresh]);
      await router(['providers', 'rm', renewable]);
    }
  });

  it('names a clock far off the upstreams', async () => {
    const skewed: Server = createServer((_req, res) => {
      res.sendDate = false;
      res.writeHead(200, { date: new Date(Date.now() - 3600_000).toUTCString(), 'content-type': 'application/json' });
      res.end('{"data":[]}');
    });
    await new Promise<void>((r) => skewed.listen(0, '127.0.0.1', () => r()));
    const base = `http://127.0.0.1:${(skewed.address() as AddressInfo).port}/v1`;
    const added = await router(['providers', 'add', 'groq', '--api-key-stdin', '--base-url', base, '--json'], 'sk-groq');
    const id = (JSON.parse(added.stdout) as { id: string }).id;
    try {
      const { exitCode, reply, text } = await doctor();
      expect(exitCode, text).toBe(1);
      const clock = reply.findings.find((f) => f.check === 'clock')!;
      expect(clock.status, text).toBe('fail');
      expect(clock.message).toMatch(/ahead of 127\.0\.0\.1:\d+/);
      expect(clock.fix).toContain('time sync');
    } finally {
      await router(['providers', 'rm', id]);
      skewed.close();
    }
  });

  it('names a state-folder file other users can read', async () => {
    const key = join(home, '.router', 'secret.key');
    chmodSync(key, 0o644);
    try {
      const { exitCode, reply, text } = await doctor();
      expect(exitCode, text).toBe(1);
      expect(failed(reply)).toEqual([expect.objectContaining({ check: 'state-folder', subject: key, fix: `chmod 600 '${key}' (router restart tightens it too)` })]);
    } finally {
      chmodSync(key, 0o600);
    }
  });

  it('names a stopped daemon (exit 1), as JSON too', async () => {
    expect((await router(['stop'])).exitCode).toBe(0);
    const { exitCode, reply, text } = await doctor();
    expect(exitCode).toBe(1);
    expect(reply).toMatchObject({ ok: false, url: `http://127.0.0.1:${port}` });
    expect(reply.findings).toEqual([expect.objectContaining({ check: 'daemon', status: 'fail', fix: expect.stringContaining('router start') })]);
    expect(text).toMatch(/^FAIL {2}daemon: the router daemon is not running at http:\/\/127\.0\.0\.1:\d+; the other checks need it -> fix: run `router start`/m);
  });
});

describe('doctor disk check', () => {
  it("fails below the threshold of free space on the state folder's disk, with the fix; passes above it", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'router-disk-'));
    try {
      const s = statfsSync(dir);
      const free = Number(s.bavail) * Number(s.bsize);
      const low = await diskFinding(dir, free + 1024 ** 3);
      expect(low).toMatchObject({ check: 'disk', subject: dir, status: 'fail', fix: expect.stringContaining(join(dir, 'backups')) });
      expect(low.message).toMatch(/^only \d+ MB free on the disk holding the state folder$/);
      expect(await diskFinding(dir, 1)).toMatchObject({ check: 'disk', status: 'pass', message: expect.stringMatching(/^\d+ MB free$/) });
      expect(await diskFinding(join(dir, 'missing'))).toMatchObject({ check: 'disk', status: 'skip' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
