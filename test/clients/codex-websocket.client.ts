/**
 * Codex CLI on the Responses WebSocket transport (docs/responses-websocket.md): a custom provider with
 * `supports_websockets = true` makes Codex open `GET /v1/responses` with `Upgrade: websocket` and send each
 * turn as a `response.create` frame. A tool round trip (the agent reads a marker file that exists only on
 * disk) must complete, served through the socket: every usage row of the run notes `transport: websocket`
 * (Codex falls back to HTTP when the socket fails, which would leave rows without it).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOL_DONE, TOOL_PROMPT } from './agent-mock.js';
import { baseEnv, describeRun, newWorkspace, runAgent } from './agent.js';
import { CLIENTS } from './install.js';
import { ROUTES, startWorld, type World } from './world.js';

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(async () => {
  await world?.stop();
});

/** The request-log rows of the Responses endpoint written since `since` (ms). */
async function responsesRows(since: number): Promise<any[]> {
  const rows = JSON.parse(await world.cli(['logs', '-n', '200', '--json'])) as any[];
  return rows.filter((r) => r.endpoint === '/v1/responses' && Date.parse(r.timestamp) >= since);
}

describe(`codex ${CLIENTS.codex.version} over the Responses WebSocket`, () => {
  for (const route of [
    { name: 'responses-passthrough', model: ROUTES.openai, upstream: 'openai.responses' },
    { name: 'responses-to-anthropic', model: ROUTES.anthropic, upstream: 'anthropic.messages' },
  ]) {
    it(`${route.name} (${route.model}): tool round trip`, async () => {
      const ws = newWorkspace('codex');
      try {
        mkdirSync(join(ws.home, '.codex'), { recursive: true });
        writeFileSync(
          join(ws.home, '.codex', 'config.toml'),
          [
            `model = "${route.model}"`,
            'model_provider = "router"',
            'check_for_update_on_startup = false',
            '',
            '[analytics]',
            'enabled = false',
            '',
            '[model_providers.router]',
            'name = "router"',
            // The daemon itself: the suite's recording pass-through speaks HTTP only.
            `base_url = "${world.routerUrl}/v1"`,
            'wire_api = "responses"',
            'env_key = "ROUTER_KEY"',
            'supports_websockets = true',
            '',
          ].join('\n'),
        );
        const since = Date.now() - 1000;
        const r = await runAgent(world, 'codex', ws, ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', TOOL_PROMPT], {
          ...baseEnv(ws.home),
          ROUTER_KEY: world.key,
        });
        const why = describeRun(r);
        expect(r.exitCode, why).toBe(0);
        expect(r.script.calls.length, why).toBeGreaterThan(0);
        const back = r.upstream.find((u) => u.body.includes(r.script.marker));
        expect(back?.endpoint, why).toBe(route.upstream);
        expect(r.stdout, why).toContain(TOOL_DONE);
        const rows = await responsesRows(since);
        expect(rows.length, `${why}\n--- rows ---\n${JSON.stringify(rows, null, 1)}`).toBeGreaterThanOrEqual(2);
        for (const row of rows) expect(JSON.parse(row.notes ?? '{}').transport, JSON.stringify(row)).toBe('websocket');
      } finally {
        rmSync(ws.root, { recursive: true, force: true });
      }
    });
  }
});
