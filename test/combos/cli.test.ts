/**
 * `router combos ...` end to end: the built CLI in a child process against a real daemon (started by
 * startRouter, which records its pid file in the state folder, so the CLI finds it through --home).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeResult, runRouter } from '../support/cli.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

let router: RouterProcess;

beforeAll(async () => {
  router = await startRouter();
});

afterAll(async () => {
  await router?.stop();
});

const cli = (...args: string[]) => runRouter([...args, '--home', router.home]);

async function ok(...args: string[]) {
  const r = await cli(...args);
  expect(r.exitCode, describeResult(r)).toBe(0);
  return r;
}

describe('router combos', { timeout: 60_000 }, () => {
  it('add --json prints the created combo; weights and timeout are applied', async () => {
    const r = await ok(
      'combos', 'add', 'cli-fast',
      '--strategy', 'weighted',
      '--model', 'openai/gpt-5',
      '--model', 'anthropic/claude-sonnet-4-5',
      '--weight', 'openai/gpt-5=3',
      '--target-timeout', '30000',
      '--json',
    );
    const combo = JSON.parse(r.stdout);
    expect(combo).toMatchObject({
      name: 'cli-fast',
      strategy: 'weighted',
      models: [{ model: 'openai/gpt-5', weight: 3 }, { model: 'anthropic/claude-sonnet-4-5' }],
      targetTimeoutMs: 30000,
    });
    const stored = await router.manage('GET', `/api/combos/${combo.id}`);
    expect(stored.json).toEqual(combo);
  });

  it('add without --json prints one line; strategy defaults to priority; a combo may list a combo', async () => {
    const r = await ok('combos', 'add', 'cli-outer', '--model', 'cli-fast', '--model', 'ollama/llama3.2');
    expect(r.stdout.trim()).toBe('created combo cli-outer (priority): cli-fast, ollama/llama3.2');
  });

  it('list prints a table (name, strategy, models, timeout) and --json the array', async () => {
    const table = await ok('combos', 'list');
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+STRATEGY\s+MODELS\s+TIMEOUT$/);
    expect(lines.find((l) => l.startsWith('cli-fast'))).toMatch(/^cli-fast\s+weighted\s+openai\/gpt-5=3, anthropic\/claude-sonnet-4-5\s+30000ms$/);
    expect(lines.find((l) => l.startsWith('cli-outer'))).toMatch(/\s+priority\s+cli-fast, ollama\/llama3\.2\s+-$/);
    const json = JSON.parse((await ok('combos', 'list', '--json')).stdout);
    expect(json.map((c: { name: string }) => c.name)).toEqual(['cli-fast', 'cli-outer']);
  });

  it('show <name> resolves by name; --json prints the record; an unknown name is a one-line error', async () => {
    const shown = JSON.parse((await ok('combos', 'show', 'cli-fast', '--json')).stdout);
    expect(shown).toMatchObject({ name: 'cli-fast', strategy: 'weighted' });
    const text = await ok('combos', 'show', 'cli-fast');
    expect(text.stdout).toContain('strategy:       weighted');
    expect(text.stdout).toContain('1. openai/gpt-5  (weight 3)');
    expect(text.stdout).toContain('target timeout: 30000 ms');
    const missing = await cli('combos', 'show', 'nope');
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr.trim()).toBe("router: no such combo 'nope'; see `router combos list`");
  });

  it('edit changes only what is given; --model replaces the list; --target-timeout none clears it; --rename', async () => {
    const s = JSON.parse((await ok('combos', 'edit', 'cli-fast', '--strategy', 'round-robin', '--json')).stdout);
    expect(s).toMatchObject({ strategy: 'round-robin', targetTimeoutMs: 30000, models: [{ model: 'openai/gpt-5', weight: 3 }, { model: 'anthropic/claude-sonnet-4-5' }] });
    const m = JSON.parse(
      (await ok('combos', 'edit', 'cli-fast', '--model', 'openai/gpt-4.1', '--model', 'gemini/gemini-2.5-pro', '--weight', 'gemini/gemini-2.5-pro=2', '--target-timeout', 'none', '--json')).stdout,
    );
    expect(m).toMatchObject({ strategy: 'round-robin', targetTimeoutMs: null, models: [{ model: 'openai/gpt-4.1' }, { model: 'gemini/gemini-2.5-pro', weight: 2 }] });
    const plain = await ok('combos', 'edit', 'cli-outer', '--target-timeout', '5000');
    expect(plain.stdout.trim()).toBe('updated combo cli-outer (priority): cli-fast, ollama/llama3.2');
    // Renaming a referenced combo is refused by the daemon (409), reported in one line.
    const ren = await cli('combos', 'edit', 'cli-fast', '--rename', 'cli-quick');
    expect(ren.exitCode).toBe(1);
    expect(ren.stderr).not.toContain('HTTP');
    expect(ren.stderr).toMatch(/^router: Combo 'cli-fast' cannot be renamed: it is used by combo 'cli-outer'[^\n]*$/);
    const renamed = JSON.parse((await ok('combos', 'edit', 'cli-outer', '--rename', 'cli-outer-2', '--json')).stdout);
    expect(renamed.name).toBe('cli-outer-2');
  });

  it('--hedge-after, --mid-stream-recovery and --context-fit on add and edit; show prints them', async () => {
    const added = JSON.parse(
      (await ok('combos', 'add', 'cli-steady', '--model', 'openai/gpt-5', '--model', 'anthropic/claude-sonnet-4-5', '--hedge-after', '1500', '--mid-stream-recovery', 'continue', '--context-fit', 'on', '--json')).stdout,
    );
    expect(added).toMatchObject({ hedgeAfterMs: 1500, midStreamRecovery: 'continue', contextFit: true });
    const shown = (await ok('combos', 'show', 'cli-steady')).stdout;
    expect(shown).toMatch(/hedge after:\s+1500 ms/);
    expect(shown).toMatch(/mid-stream:\s+continue/);
    expect(shown).toMatch(/context fit:\s+on/);
    // Options not given keep their value; none/off turn them off.
    const edited = JSON.parse((await ok('combos', 'edit', 'cli-steady', '--strategy', 'random', '--json')).stdout);
    expect(edited).toMatchObject({ strategy: 'random', hedgeAfterMs: 1500, midStreamRecovery: 'continue', contextFit: true });
    const off = JSON.parse((await ok('combos', 'edit', 'cli-steady', '--hedge-after', 'none', '--mid-stream-recovery', 'off', '--context-fit', 'off', '--json')).stdout);
    expect(off).toMatchObject({ hedgeAfterMs: null, midStreamRecovery: null, contextFit: false });
    const bad = await cli('combos', 'edit', 'cli-steady', '--mid-stream-recovery', 'retry');
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/midStreamRecovery/);
    expect((await cli('combos', 'edit', 'cli-steady', '--hedge-after', 'soon')).exitCode).toBe(2);
    await ok('combos', 'rm', 'cli-steady');
  });

  it('daemon validation errors come back as one line naming the field, with exit 2 like a usage error', async () => {
    const shadow = await cli('combos', 'add', 'openai/x', '--model', 'openai/gpt-5');
    expect(shadow.exitCode).toBe(2);
    expect(shadow.stderr).toMatch(/^router: (name: )?Combo name 'openai\/x' would shadow provider 'openai'[^\n]*$/);
    expect(shadow.stderr).not.toContain('HTTP');
    const strategy = await cli('combos', 'add', 'x1', '--strategy', 'fastest', '--model', 'openai/gpt-5');
    expect(strategy.stderr).toMatch(/^router: strategy: must be one of priority/);
    const dup = await cli('combos', 'add', 'cli-fast', '--model', 'openai/gpt-5');
    expect(dup.stderr).toMatch(/already exists[^\n]*$/);
    const unknown = await cli('combos', 'add', 'x2', '--model', 'nope/x');
    expect(unknown.stderr).toMatch(/^router: models\[0\]: .*'nope' is not a known provider/);
    expect(unknown.stderr).not.toMatch(/\[field|HTTP/);
  });

  it('usage errors are caught before calling the daemon (exit 2)', async () => {
    const noModel = await cli('combos', 'add', 'x3');
    expect(noModel.exitCode).toBe(2);
    expect(noModel.stderr).toContain('at least one --model is required');
    const badWeight = await cli('combos', 'add', 'x3', '--model', 'openai/gpt-5', '--weight', 'openai/gpt-5');
    expect(badWeight.exitCode).toBe(2);
    expect(badWeight.stderr).toContain('--weight expects MODEL=NUMBER');
    const strayWeight = await cli('combos', 'add', 'x3', '--model', 'openai/gpt-5', '--weight', 'openai/gpt-4.1=2');
    expect(strayWeight.exitCode).toBe(2);
    expect(strayWeight.stderr).toContain("not among the combo's models");
    const badTimeout = await cli('combos', 'add', 'x3', '--model', 'openai/gpt-5', '--target-timeout', '1.5s');
    expect(badTimeout.exitCode).toBe(2);
    expect((await router.manage('GET', '/api/combos')).json.combos.map((c: { name: string }) => c.name)).not.toContain('x3');
  });

  it('rm deletes by name; a referenced combo is refused with the referrer named', async () => {
    const refused = await cli('combos', 'rm', 'cli-fast');
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toMatch(/cannot be deleted: it is used by combo 'cli-outer-2'[^\n]*$/);
    expect((await ok('combos', 'rm', 'cli-outer-2')).stdout.trim()).toBe('deleted combo cli-outer-2');
    await ok('combos', 'rm', 'cli-fast');
    expect(JSON.parse((await ok('combos', 'list', '--json')).stdout)).toEqual([]);
    expect((await ok('combos', 'list')).stdout).toMatch(/^no combos/);
    expect((await cli('combos', 'rm', 'cli-fast')).exitCode).toBe(1);
  });

  it('help lists the subcommands and shows examples', async () => {
    const help = await ok('combos', '--help');
    for (const sub of ['add', 'list', 'show', 'edit', 'rm']) expect(help.stdout).toMatch(new RegExp(`^\\s+${sub}\\b`, 'm'));
    const addHelp = await ok('combos', 'add', '--help');
    expect(addHelp.stdout).toContain('Examples:');
    expect(addHelp.stdout).toContain('--target-timeout <ms>');
  });

  it('a combo added with the CLI shows in GET /v1/models', async () => {
    await ok('combos', 'add', 'cli-cat', '--model', 'anthropic/claude-sonnet-4-5', '--model', 'openai/gpt-5');
    const key = await router.createKey();
    const res = await fetch(`${router.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    const body = (await res.json()) as { data: Array<{ id: string; owned_by: string; context_length?: number }> };
    expect(body.data.find((m) => m.id === 'cli-cat')).toMatchObject({ owned_by: 'combo', context_length: 200_000 });
  });
});
