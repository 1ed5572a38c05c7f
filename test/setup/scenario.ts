/**
 * `router setup` from a fresh HOME, end to end, with the real CLI and daemon and mock upstreams: the agents'
 * binaries come from a folder on PATH (fakes in the default suite, the pinned real agents in the clients
 * suite). Provider keys are in the environment with their base URL variables pointing at the mock; one of
 * them is refused by its upstream.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolById } from '../../src/shared/agent-tools/tools.js';
import type { DoctorReply } from '../../src/shared/doctor.js';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { describeResult, freePort, killDaemonOf, runRouter } from '../support/cli.js';

export interface ScenarioAgent {
  /** The binary's name on PATH. */
  bin: string;
  /** AgentBridge's id (and the result's). */
  id: string;
  /** Arguments for one prompt when the agent runs on its own after setup. */
  args(prompt: string): string[];
  /** The upstream endpoint its requests end at (router picks the agent's own provider first). */
  upstream: string;
  /** Environment the agent needs to run headless in a test (no telemetry, trust, etc.); never where it sends requests. */
  env?: Record<string, string>;
  /** The user's own settings files (relative to HOME) before setup, e.g. telemetry off; setup must keep them. */
  files?: Record<string, string>;
}

export interface ScenarioOptions {
  title: string;
  /** The folder holding the agents' binaries (put first on PATH). */
  binDir: string;
  agents: ScenarioAgent[];
  /** Agents setup finds but leaves alone, with the reason it must give. */
  leftAlone?: Array<{ bin: string; id: string; reason: RegExp }>;
  timeoutMs: number;
}

const REFUSED = 'sk-refused-by-upstream';
/** User settings that exist before setup: undo must bring these bytes back. */
const CLAUDE_BEFORE = '{\n    "model": "opus",\n    "env": { "BASH_DEFAULT_TIMEOUT_MS": "120000" }\n}\n';
const CODEX_BEFORE = '# mine\ncheck_for_update_on_startup = false\n\n[analytics]\nenabled = false\n';
/**
 * The user's own settings of the agents that have them before setup (relative to HOME): no update checks or
 * usage statistics (Qwen Code, in the schema version it writes), no banner (Copilot CLI), Cline used with
 * another provider before (it stays; router's becomes the one in use). Undo must bring these bytes back.
 */
const USER_FILES: Record<string, Record<string, string>> = {
  'qwen-code': { '.qwen/settings.json': '{\n  "$version": 4,\n  "general": { "enableAutoUpdate": false },\n  "privacy": { "usageStatisticsEnabled": false }\n}\n' },
  'copilot-cli': { '.copilot/settings.json': '{\n  "banner": "never"\n}\n' },
  cline: {
    '.cline/data/settings/providers.json':
      '{\n  "version": 1,\n  "lastUsedProvider": "anthropic",\n  "modes": {},\n  "providers": {\n    "anthropic": {\n      "settings": { "provider": "anthropic", "apiKey": "sk-ant-mine", "model": "claude-sonnet-4-5" },\n      "updatedAt": "2026-01-01T00:00:00.000Z",\n      "tokenSource": "manual"\n    }\n  }\n}\n',
  },
};

export function setupScenario(o: ScenarioOptions): void {
  describe(o.title, () => {
    let root: string;
    let home: string;
    let port: number;
    let mock: MockUpstream;
    let env: Record<string, string>;
    const files = () => ({
      claude: join(home, '.claude', 'settings.json'),
      codex: join(home, '.codex', 'config.toml'),
      geminiSettings: join(home, '.gemini', 'settings.json'),
      geminiEnv: join(home, '.gemini', '.env'),
      opencode: join(home, '.config', 'opencode', 'opencode.json'),
      qwen: join(home, '.qwen', 'settings.json'),
      copilotSettings: join(home, '.copilot', 'settings.json'),
      copilotProviders: join(home, '.copilot', 'providers.json'),
      clineProviders: join(home, '.cline', 'data', 'settings', 'providers.json'),
      clineState: join(home, '.cline', 'data', 'globalState.json'),
      clineSecrets: join(home, '.cline', 'data', 'secrets.json'),
    });
    const read = (f: string) => {
      try {
        return readFileSync(f, 'utf8');
      } catch {
        return null;
      }
    };
    const snapshot = () => Object.fromEntries(Object.entries(files()).map(([k, f]) => [k, read(f)]));
    /** The files less what each agent rewrites itself on every run (Cline 3's last-used time): what setup changed. */
    const settled = () => ({ ...snapshot(), clineProviders: ((t) => (t === null ? null : toolById('cline')!.stable!(files().clineProviders, t)))(read(files().clineProviders)) });
    // setup runs every agent once (at the same time): on a small machine that takes a few agents' time.
    const router = (args: string[]) => runRouter([...args, '--port', String(port)], { env, timeoutMs: args[0] === 'setup' ? o.timeoutMs * 2 : o.timeoutMs });
    const state = async () => ({
      keys: JSON.parse((await router(['keys', 'list', '--json'])).stdout).map((k: { id: string }) => k.id).sort(),
      connections: JSON.parse((await router(['providers', 'list', '--json'])).stdout).map((c: { id: string; updatedAt: string }) => `${c.id}@${c.updatedAt}`).sort(),
    });
    const put = (file: string, text: string) => {
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, text);
    };

    beforeAll(async () => {
      root = mkdtempSync(join(tmpdir(), 'router-setup-'));
      home = join(root, 'home');
      mkdirSync(join(home, '.tmp'), { recursive: true });
      port = await freePort();
      mock = await startMockUpstream();
      mock.handle((req) => (JSON.stringify(req.headers).includes(REFUSED) ? { type: 'status', status: 401, message: 'Incorrect API key provided: sk-ref***' } : undefined));
      const host = mock.url;
      env = {
        HOME: home,
        PATH: `${o.binDir}:${process.env.PATH}`,
        TMPDIR: join(home, '.tmp'),
        ROUTER_KEYCHAIN_BACKEND: 'none',
        OPENAI_API_KEY: 'sk-test-openai',
        OPENAI_BASE_URL: `${host}/v1`,
        ANTHROPIC_API_KEY: 'sk-test-anthropic',
        ANTHROPIC_BASE_URL: host,
        GEMINI_API_KEY: 'sk-test-gemini',
        GOOGLE_GEMINI_BASE_URL: host,
        OPENROUTER_API_KEY: REFUSED,
        OPENROUTER_BASE_URL: `${host}/v1`,
        // No agent reaches a package registry or phones home from a test.
        npm_config_registry: 'http://127.0.0.1:9/',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_AUTOUPDATER: '1',
        OPENCODE_DISABLE_AUTOUPDATE: '1',
        OPENCODE_DISABLE_MODELS_FETCH: '1',
        OPENCODE_DISABLE_SHARE: '1',
        OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
        OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
        ...Object.assign({}, ...o.agents.map((a) => a.env ?? {})),
      };
      put(files().claude, CLAUDE_BEFORE);
      put(files().codex, CODEX_BEFORE);
      for (const a of o.agents) for (const [rel, text] of Object.entries({ ...USER_FILES[a.id], ...a.files })) put(join(home, rel), text);
    }, 60_000);

    afterAll(async () => {
      await runRouter(['stop', '--port', String(port)], { env }).catch(() => undefined);
      await killDaemonOf(join(home, '.router'));
      await mock?.close();
      rmSync(root, { recursive: true, force: true });
    });

    it('without --yes and without a terminal changes nothing and says how to confirm', async () => {
      const before = snapshot();
      const r = await router(['setup']);
      expect(r.exitCode, describeResult(r)).toBe(2);
      expect(r.stderr).toContain('router setup --yes');
      // No daemon ran in this HOME: setup started it (and it stays for the runs after).
      expect(r.stdout).toContain(`router started at http://127.0.0.1:${port}`);
      for (const a of o.agents) expect(r.stdout).toMatch(new RegExp(`\\(${o.binDir}/${a.bin}\\): point it at router`));
      for (const a of o.leftAlone ?? []) expect(r.stdout).toMatch(new RegExp(`\\(${o.binDir}/${a.bin}\\): left as it is: ${a.reason.source}`));
      expect(r.stdout).toContain('OPENAI_API_KEY (openai at ');
      expect(r.stdout).not.toContain('sk-test-');
      expect(snapshot()).toEqual(before);
      expect(await state()).toEqual({ keys: [], connections: [] });
    });

    let beforeSetup: ReturnType<typeof snapshot>;
    it('finds and configures every agent, proves each through router, reports the refused key with the upstream\'s reason', async () => {
      beforeSetup = snapshot();
      mock.reset();
      mock.handle((req) => (JSON.stringify(req.headers).includes(REFUSED) ? { type: 'status', status: 401, message: 'Incorrect API key provided: sk-ref***' } : undefined));
      const r = await router(['setup', '--yes', '--json']);
      const why = describeResult(r);
      expect(r.exitCode, why).toBe(1);
      const out = JSON.parse(r.stdout);
      expect(out).toMatchObject({ applied: true, changed: true, daemonStarted: false });
      const refused = out.credentials.find((c: any) => c.source === 'OPENROUTER_API_KEY');
      expect(refused, why).toMatchObject({ ok: false, provider: 'openrouter' });
      expect(refused.error).toContain('Incorrect API key provided');
      for (const v of ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GEMINI_API_KEY']) expect(out.credentials.find((c: any) => c.source === v), why).toMatchObject({ ok: true, action: 'created' });
      for (const a of o.agents) {
        const got = out.agents.find((x: any) => x.id === a.id);
        expect(got, why).toMatchObject({ action: 'configured', proof: { ok: true } });
        expect(got.version, why).toMatch(/\d+\.\d+/);
      }
      for (const a of o.leftAlone ?? []) {
        const got = out.agents.find((x: any) => x.id === a.id);
        expect(got, why).toMatchObject({ action: 'unsupported', proof: null, files: [] });
        expect(got.reason).toMatch(a.reason);
        expect(got.fix).toBeTruthy();
      }
      // Each proof request reached the mock through router.
      const proofs = mock.requests.filter((q) => q.body.includes('Reply with the single word OK.'));
      for (const a of o.agents) expect(proofs.map((p) => p.endpoint), why).toContain(a.upstream);
      // Gemini CLI prefers a GEMINI_API_KEY in the shell: the result says so.
      const gemini = out.agents.find((x: any) => x.id === 'gemini-cli');
      if (gemini) expect(gemini.proof.warning).toContain('GEMINI_API_KEY');
      // The user's own settings stayed beside router's.
      expect(JSON.parse(readFileSync(files().claude, 'utf8'))).toMatchObject({ model: 'opus', env: { BASH_DEFAULT_TIMEOUT_MS: '120000', ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}` } });
      expect(readFileSync(files().codex, 'utf8')).toContain('[analytics]\nenabled = false');
    }, o.timeoutMs * 3);

    it('each agent then works on its own', async () => {
      for (const a of o.agents) {
        mock.reset();
        const work = mkdtempSync(join(root, 'work-'));
        const own = { ...env, ...(a.env ?? {}) };
        // Gemini CLI reads router's settings from ~/.gemini/.env only when the shell has no key of its own.
        if (a.id === 'gemini-cli') delete own.GEMINI_API_KEY;
        const r = await execa(a.bin, a.args('Say PLAIN_OK please.'), { cwd: work, env: own, extendEnv: false, reject: false, stdin: 'ignore', timeout: o.timeoutMs });
        const why = `${a.id}: exit ${r.exitCode}\n${r.stdout}\n${r.stderr}`;
        expect(r.exitCode, why).toBe(0);
        expect(mock.requests.some((q) => q.endpoint === a.upstream && q.body.includes('PLAIN_OK')), why).toBe(true);
      }
    }, o.timeoutMs * 4);

    it('doctor passes for every agent setup configured', async () => {
      const r = await router(['doctor', '--json']);
      const reply = JSON.parse(r.stdout) as DoctorReply;
      const agents = reply.findings.filter((f) => f.check === 'agent');
      expect(agents.length, r.stdout).toBe(o.agents.length);
      expect(agents.every((f) => f.status === 'pass'), r.stdout).toBe(true);
      // The refused account is the one failure.
      expect(reply.findings.filter((f) => f.status === 'fail').map((f) => f.check), r.stdout).toEqual(['account']);
    });

    it('a second run changes nothing: no new keys, connections or config edits', async () => {
      const before = { files: settled(), ...(await state()) };
      const r = await router(['setup', '--yes', '--json']);
      const why = describeResult(r);
      const out = JSON.parse(r.stdout);
      expect(out.changed, why).toBe(false);
      for (const a of o.agents) expect(out.agents.find((x: any) => x.id === a.id), why).toMatchObject({ action: 'unchanged', proof: { ok: true } });
      expect({ files: settled(), ...(await state()) }).toEqual(before);
      // Nothing to change: no confirmation is needed either.
      const again = await router(['setup']);
      expect(again.stdout, describeResult(again)).toContain('Nothing to change');
    }, o.timeoutMs * 3);

    it('doctor then names a broken agent config (exit 1)', async () => {
      const before = readFileSync(files().claude, 'utf8');
      writeFileSync(files().claude, before.replace(`127.0.0.1:${port}`, '127.0.0.1:9'));
      try {
        const r = await router(['doctor']);
        expect(r.exitCode, r.stdout).toBe(1);
        expect(r.stdout).toMatch(/^FAIL {2}agent Claude Code .*points at http:\/\/127\.0\.0\.1:9, not at router.*-> fix: run `router setup`/m);
      } finally {
        writeFileSync(files().claude, before);
      }
    });

    it('--undo restores every agent config byte for byte and removes the keys setup made', async () => {
      const refused = await router(['setup', '--undo']);
      expect(refused.exitCode, describeResult(refused)).toBe(2);
      expect(refused.stderr).toContain('router setup --undo --yes');
      const keys = (await state()).keys;
      const r = await router(['setup', '--undo', '--yes', '--json']);
      expect(r.exitCode, describeResult(r)).toBe(0);
      const s = snapshot();
      expect(s.claude).toBe(CLAUDE_BEFORE);
      expect(s.codex).toBe(CODEX_BEFORE);
      // Every file as it was: the user's own bytes back, the files setup created gone.
      expect(s).toEqual(beforeSetup);
      expect(Object.values(beforeSetup).filter((v) => v === null).length).toBeGreaterThan(0);
      expect(JSON.parse(r.stdout).keysRemoved.sort()).toEqual(keys);
      expect((await state()).keys).toEqual([]);
      expect((await router(['setup', '--undo', '--yes'])).stderr).toContain('nothing to undo');
    });

    it('doctor names a stopped daemon (exit 1)', async () => {
      expect((await router(['stop'])).exitCode).toBe(0);
      const r = await router(['doctor', '--json']);
      expect(r.exitCode).toBe(1);
      expect(JSON.parse(r.stdout).findings).toEqual([expect.objectContaining({ check: 'daemon', status: 'fail', fix: expect.stringContaining('router start') })]);
    });
  });
}
