/**
 * Issue 27 item 13, the CLI part, with the real CLI process against the real daemon: memory on and off per
 * API key (`router keys memory`), and plain tables that fit an 80-column terminal (COLUMNS=80) without
 * losing what they show: free-text columns wrap, and a table that still does not fit prints each row as a
 * record. Piped output without COLUMNS keeps one line per row.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { describeResult, runRouter } from '../support/cli.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

let router: RouterProcess;
let mock: MockUpstream;

beforeAll(async () => {
  [router, mock] = await Promise.all([startRouter(), startMockUpstream()]);
}, 60_000);

afterAll(async () => {
  await Promise.all([router?.stop(), mock?.close()]);
});

async function cli(args: string[], env: Record<string, string> = {}) {
  const r = await runRouter([...args, '--home', router.home], { env: { ROUTER_CLI_CONFIG_DIR: join(router.home, 'cli-config'), ...env } });
  expect(r.exitCode, describeResult(r)).toBe(0);
  return r.stdout;
}

describe('router keys memory', () => {
  it('turns memory on and off for one key, each part on its own, and shows it', async () => {
    const created = JSON.parse(await cli(['keys', 'add', '--name', 'notes', '--json'])) as { id: string };
    const other = JSON.parse(await cli(['keys', 'add', '--name', 'other', '--json'])) as { id: string };
    const stored = async (id: string) => (await router.manage('GET', `/api/memory/keys/${id}/settings`)).json;

    expect(await cli(['keys', 'memory', 'notes'])).toMatch(/^memory of key notes \(.+\): off\n {2}inject +off .*\n {2}extract +off/);

    const on = await cli(['keys', 'memory', 'notes', 'on']);
    expect(on).toMatch(/: on\n {2}inject +on +\(up to 10 memories, 1,000 tokens, hybrid retrieval/);
    expect(await stored(created.id)).toMatchObject({ inject: true, extract: true });
    expect(await stored(other.id)).toMatchObject({ inject: false, extract: false });

    const parts = JSON.parse(await cli(['keys', 'memory', created.id, '--extract', 'off', '--limit', '5', '--max-tokens', '800', '--scope', 'key', '--json']));
    expect(parts).toEqual({ apiKeyId: created.id, inject: true, extract: false, injectMaxTokens: 800, injectLimit: 5, strategy: 'hybrid', scope: 'key' });
    expect(await stored(created.id)).toEqual(parts);

    await cli(['keys', 'memory', 'notes', 'off']);
    expect(await stored(created.id)).toMatchObject({ inject: false, extract: false, injectLimit: 5 });
  });

  it('refuses a bad state or value with a usage error (exit 2), and an unknown key (exit 1)', async () => {
    for (const args of [
      ['keys', 'memory', 'notes', 'maybe'],
      ['keys', 'memory', 'notes', '--inject', 'yes'],
      ['keys', 'memory', 'notes', '--limit', '0'],
    ]) {
      const r = await runRouter([...args, '--home', router.home]);
      expect(r.exitCode, describeResult(r)).toBe(2);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    const r = await runRouter(['keys', 'memory', 'nobody', 'on', '--home', router.home]);
    expect(r.exitCode, describeResult(r)).toBe(1);
    expect(r.stderr).toMatch(/no such API key 'nobody'/);
  });
});

describe('plain tables at 80 columns', () => {
  it('every table-printing command fits COLUMNS=80 and keeps ids and values whole', async () => {
    const long = 'a key with a rather long descriptive name for the laptop in the office';
    const key = JSON.parse(await cli(['keys', 'add', '--name', long, '--scope', 'proxy', '--scope', 'manage', '--json'])) as { id: string; key: string };
    await cli(['providers', 'add', 'openai', '--name', 'personal account with a long name', '--api-key', 'sk-wide-0123456789abcdef', '--base-url', mock.openaiBase]);
    await cli(['providers', 'nodes', 'add', '--name', 'a local box with a long name', '--prefix', 'box', '--type', 'openai-compatible', '--base-url', `${mock.openaiBase}/with/a/long/path/segment`]);
    await cli(['combos', 'add', 'wide', '--model', 'openai/gpt-4o-mini', '--model', 'openai/gpt-4o', '--model', 'box/some-model-with-a-long-id']);
    await cli(['webhooks', 'add', 'https://hooks.example.com/services/T000/B000/a-long-webhook-path', '--event', 'request.failed', '--event', 'provider.error', '--event', 'quota.exceeded']);
    await cli(['memory', 'add', 'deploy.policy', 'Production deploys run from the release branch only, after the nightly tests pass']);
    const evalFile = join(router.home, 'eval.json');
    writeFileSync(evalFile, JSON.stringify({ name: 'basics', models: ['openai/gpt-4o-mini', 'openai/gpt-4o', 'wide'], cases: [{ prompt: 'Say yes.', checks: [{ type: 'contains', value: 'yes' }] }] }));
    await cli(['evals', 'create', evalFile]);
    await cli(['backup', 'create']);
    for (const model of ['openai/gpt-4o-mini', 'box/some-model-with-a-long-id']) {
      const res = await fetch(`${router.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }] }),
      });
      await res.text();
    }

    const commands = [
      ['keys', 'list'],
      ['providers', 'list'],
      ['providers', 'catalog'],
      ['providers', 'nodes', 'list'],
      ['models'],
      ['models', '--all'],
      ['combos', 'list'],
      ['webhooks', 'list'],
      ['logs'],
      ['usage', '--by', 'model'],
      ['memory', 'list'],
      ['memory', 'search', 'deploy'],
      ['evals', 'list'],
      ['backup', 'list'],
      ['dashboard'],
    ];
    const wide: Record<string, string> = {};
    for (const args of commands) {
      const narrow = await cli(args, { COLUMNS: '80' });
      if (process.env.SHOW_TABLES) console.log(`$ router ${args.join(' ')}\n${narrow}`);
      const over = narrow.split('\n').filter((l) => l.length > 80);
      expect(over, `router ${args.join(' ')} at 80 columns:\n${narrow}`).toEqual([]);
      wide[args.join(' ')] = await cli(args, { COLUMNS: '400' });
    }

    // Nothing is cut: the whole id, name and webhook URL are there, each on one line.
    const keys = await cli(['keys', 'list'], { COLUMNS: '80' });
    expect(keys).toContain(key.id);
    expect(keys).toMatch(/^NAME {13}a key with a rather long descriptive name for the laptop in the\n {17}office$/m);
    const webhooks = await cli(['webhooks', 'list'], { COLUMNS: '80' });
    // A value longer than the line continues on the next one, under itself.
    expect(webhooks.replace(/\n {17}/g, '')).toMatch(/^URL {14}https:\/\/hooks\.example\.com\/services\/T000\/B000\/a-long-webhook-path$/m);
    // A table whose free-text column can narrow stays a table: combos wrap their model list.
    const combos = await cli(['combos', 'list'], { COLUMNS: '60' });
    expect(combos).toMatch(/^NAME +STRATEGY +MODELS/);
    expect(combos.split('\n').every((l) => l.length <= 60)).toBe(true);
    expect(combos.replace(/\s+/g, ' ')).toContain('box/some-model-with-a-long-id');

    // Wide output is one line per row, as before.
    expect(wide['keys list']!.split('\n').find((l) => l.includes(key.id))).toContain(long);
  }, 120_000);

  it('piped output without COLUMNS keeps one line per row', async () => {
    const out = await cli(['keys', 'list'], { COLUMNS: '' });
    const lines = out.trim().split('\n');
    expect(lines[0]).toMatch(/^ID +NAME +KEY +SCOPES +STATE +REQ\/DAY +LAST USED \(UTC\)$/);
    const keys = (await router.manage('GET', '/api/keys')).json.keys as Array<{ id: string; name: string }>;
    expect(lines).toHaveLength(keys.length + 1);
  });
});
