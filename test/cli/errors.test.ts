/**
 * Issue 15 item 5: one error style and the documented exit codes. Validation the daemon refuses exits 2
 * like a local usage error, in one line that names the field in words; settings get/set agree on unknown
 * names and reach nested settings; a typo gets "Did you mean" and a short usage line, not the whole help.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { runRouter } from '../support/cli.js';
import { isolateCliConfig, run, show } from './helpers.js';

let router: RouterProcess;
let configDir: string;

beforeAll(async () => {
  configDir = isolateCliConfig();
  router = await startRouter();
}, 60_000);

afterAll(async () => {
  await router?.stop();
  rmSync(configDir, { recursive: true, force: true });
});

const R = (...args: string[]) => run([...args, '--home', router.home]);

describe('one error style', () => {
  it('a value the daemon refuses exits 2, one line, the field in words, no internal suffix', async () => {
    const r = await R('combos', 'add', 'c1', '--model', 'nope/x');
    expect(r.exitCode, show(r)).toBe(2);
    expect(r.stderr).toMatch(/^router: models\[0\]: [^\n]+\n$/);
    expect(r.stderr).not.toMatch(/\(HTTP \d+\)|\[field|Invalid field/);
    const s = await R('settings', 'set', 'breakerFailureThreshold', '0');
    expect(s.exitCode, show(s)).toBe(2);
    expect(s.stderr).toMatch(/^router: breakerFailureThreshold: [^\n]+\n$/);
  });

  it('settings get and set agree on an unknown name: exit 2, "no such setting", a suggestion', async () => {
    for (const args of [['settings', 'get', 'requireLogn'], ['settings', 'set', 'requireLogn', 'false']]) {
      const r = await R(...args);
      expect(r.exitCode, show(r)).toBe(2);
      expect(r.stderr).toBe("router: no such setting 'requireLogn'. Did you mean 'requireLogin'? See `router settings get`.\n");
    }
  });

  it('nested settings: set compression.enabled changes that field and keeps its siblings', async () => {
    await router.manage('PUT', '/api/settings/compression', { enabled: false, toolOutputMaxTokens: 1234 });
    const r = await R('settings', 'set', 'compression.enabled', 'true');
    expect([r.exitCode, r.stdout], show(r)).toEqual([0, 'compression.enabled = true\n']);
    expect((await router.manage('GET', '/api/settings/compression')).json).toMatchObject({ enabled: true, toolOutputMaxTokens: 1234 });
    expect((await R('settings', 'get', 'compression.toolOutputMaxTokens')).stdout).toBe('1234\n');
    const typo = await R('settings', 'set', 'compression.enabld', 'false');
    expect(typo.stderr).toMatch(/Did you mean 'compression\.enabled'\?/);
  });

  it('a refused loopback webhook names the setting that allows it', async () => {
    const r = await R('webhooks', 'add', 'http://127.0.0.1:9/hook', '--event', 'request.failed');
    expect(r.exitCode, show(r)).toBe(2);
    expect(r.stderr).toMatch(/^router: url: .*allowPrivateWebhookDestinations/);
  });

  it('a typo prints "Did you mean" and the short usage line, not the full help (real process)', async () => {
    const r = await runRouter(['keyz', '--home', router.home]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toBe("error: unknown command 'keyz'\n(Did you mean keys?)\nUsage: router [options] [command]\nRun `router --help` for options and examples.");
    const sub = await runRouter(['keys', 'list', '--jsn', '--home', router.home]);
    expect(sub.exitCode).toBe(2);
    expect(sub.stderr).toMatch(/^error: unknown option '--jsn'\n\(Did you mean --json\?\)\nUsage: router keys list \[options\]\n/);
    expect(sub.stderr).not.toMatch(/Options:|Examples:/);
  });
});
