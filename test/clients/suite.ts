/**
 * One agent's cases: for each route, a plain prompt and a tool round trip, against one world. With
 * CLIENTS_RECORD=1 the requests the agent sent are written to test/fixtures/clients/<agent>/ for the
 * default suite's replay test (test/clients/replay.test.ts).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLAIN_PROMPT, PLAIN_REPLY, TOOL_DONE, TOOL_PROMPT } from './agent-mock.js';
import { describeRun, newWorkspace, runAgent, type AgentRun, type Workspace } from './agent.js';
import { CLIENTS, type ClientName } from './install.js';
import { startWorld, type RecordedRequest, type World } from './world.js';
import { REPO_ROOT } from '../support/cli.js';
import type { Endpoint } from '../mocks/types.js';

export interface AgentRoute {
  /** Short name used in test titles and fixture file names, e.g. `messages-to-chat`. */
  name: string;
  model: string;
  /** The upstream endpoint router must call for this route. */
  upstream: Endpoint;
  /** Keep this route's tool round trip as a fixture (one per distinct request shape of the agent). */
  fixture?: boolean;
}

export interface AgentSetup {
  args: string[];
  env: Record<string, string>;
}

export const FIXTURES_DIR = join(REPO_ROOT, 'test', 'fixtures', 'clients');

/** The paths of model calls (what the fixtures keep): chat-like endpoints of every format. */
export function isModelCall(r: RecordedRequest): boolean {
  return r.method === 'POST' && /\/(chat\/completions|responses|messages|messages\/count_tokens)$|:(stream)?[gG]enerateContent|:countTokens/.test(r.url.split('?')[0]!);
}

function record(client: ClientName, route: AgentRoute, run: AgentRun): void {
  if (process.env.CLIENTS_RECORD !== '1' || !route.fixture) return;
  const dir = join(FIXTURES_DIR, client);
  mkdirSync(dir, { recursive: true });
  // A request the agent retried is kept once.
  const seen = new Set<string>();
  const calls = run.sent.filter((r) => isModelCall(r) && !seen.has(r.url + r.body) && seen.add(r.url + r.body));
  const requests = calls.map((r) => ({
    method: r.method,
    url: r.url,
    headers: r.headers,
    status: r.status,
    json: JSON.parse(r.body),
  }));
  const fixture = {
    client,
    package: `${CLIENTS[client].pkg}@${CLIENTS[client].version}`,
    route: route.name,
    model: route.model,
    marker: run.script.marker,
    toolCalls: run.script.calls,
    requests,
  };
  writeFileSync(join(dir, `${route.name}.json`), `${JSON.stringify(fixture, null, 2)}\n`);
}

export function agentSuite(
  client: ClientName,
  routes: AgentRoute[],
  setup: (world: World, ws: Workspace, route: AgentRoute, prompt: string) => Promise<AgentSetup> | AgentSetup,
): void {
  describe(`${client} ${CLIENTS[client].version}`, () => {
    let world: World;
    beforeAll(async () => {
      world = await startWorld();
    });
    afterAll(async () => {
      await world?.stop();
    });

    const run = async (route: AgentRoute, prompt: string) => {
      const ws = newWorkspace(client);
      try {
        const s = await setup(world, ws, route, prompt);
        return await runAgent(world, client, ws, s.args, s.env);
      } finally {
        rmSync(ws.root, { recursive: true, force: true });
      }
    };

    for (const route of routes) {
      it(`${route.name} (${route.model}): plain prompt`, async () => {
        const r = await run(route, PLAIN_PROMPT);
        const why = describeRun(r);
        expect(r.exitCode, why).toBe(0);
        expect(r.stdout, why).toContain('PLAIN_OK from the mock model');
        expect(r.upstream.some((u) => u.endpoint === route.upstream && u.body.includes(PLAIN_PROMPT)), why).toBe(true);
        expect(r.sent.filter(isModelCall).every((s) => s.status === 200), why).toBe(true);
        void PLAIN_REPLY;
      });

      it(`${route.name} (${route.model}): tool round trip`, async () => {
        const r = await run(route, TOOL_PROMPT);
        record(client, route, r);
        const why = describeRun(r);
        expect(r.script.calls.length, why).toBeGreaterThan(0);
        // The marker exists only on disk: in an upstream request it is the tool's real result coming back.
        const back = r.upstream.find((u) => u.body.includes(r.script.marker));
        expect(back, why).toBeDefined();
        expect(back!.endpoint, why).toBe(route.upstream);
        expect(r.exitCode, why).toBe(0);
        expect(r.stdout, why).toContain(TOOL_DONE);
        expect(r.sent.filter(isModelCall).every((s) => s.status === 200), why).toBe(true);
      });
    }
  });
}
