// @vitest-isolate: forces colour (FORCE_COLOR) before chalk and Ink load; in the shared module cache another file may have loaded them without colour.
/**
 * Issue 15 item 7: colour where it carries meaning on the dashboard: errors red, circuits that refuse
 * requests yellow. Colour is forced on for this file (FORCE_COLOR=1, set before Ink and chalk load), as
 * on a colour terminal; `NO_COLOR` and non-terminals are covered by the tmux test and the plain commands.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LiveMessage } from '../../src/cli/types.js';

const strip = (s: string) => s.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '');
let render: typeof import('ink-testing-library').render;
let Dashboard: typeof import('../../src/cli/tui/dashboard.js').Dashboard;
const saved = process.env.FORCE_COLOR;

beforeAll(async () => {
  process.env.FORCE_COLOR = '1';
  ({ render } = await import('ink-testing-library'));
  ({ Dashboard } = await import('../../src/cli/tui/dashboard.js'));
});
afterAll(() => {
  if (saved === undefined) delete process.env.FORCE_COLOR;
  else process.env.FORCE_COLOR = saved;
});

describe('colour carries meaning', () => {
  it('errors are red and open circuits yellow on the dashboard', async () => {
    const now = Date.parse('2025-06-01T12:00:30.000Z');
    const routes: Record<string, unknown> = {
      '/api/system/status': { running: true, pid: 1, url: 'http://127.0.0.1:20128', version: '0.1.0', uptimeSeconds: 1 },
      '/api/providers': { connections: [{ id: 'c3', provider: 'anthropic', name: 'work', isActive: true }] },
      '/api/combos': { combos: [] },
      '/api/resilience': { breakers: [{ provider: 'anthropic', state: 'open', consecutiveFailures: 5, openUntil: new Date(now + 25_000).toISOString() }], cooldowns: [], settings: {} },
    };
    const listeners = new Set<(m: LiveMessage) => void>();
    const source = {
      url: 'http://127.0.0.1:20128',
      get: async (path: string) => {
        const v = routes[path.split('?')[0]!];
        if (v === undefined) throw new Error('no route');
        return v as never;
      },
      post: async () => ({}) as never,
      subscribe: (m: (x: LiveMessage) => void, s?: (state: 'open') => void) => {
        listeners.add(m);
        s?.('open');
        return () => listeners.delete(m);
      },
    };
    const ui = render(<Dashboard source={source} width={80} height={23} now={now} onOpen={() => {}} onQuit={() => {}} />);
    const wait = async (re: RegExp) => {
      for (let i = 0; i < 300 && !re.test(strip(ui.lastFrame() ?? '')); i++) await new Promise((r) => setTimeout(r, 10));
    };
    await wait(/^anthropic\s+1\/1\s+open/m);
    const e = { type: 'request', timestamp: new Date(now - 1000).toISOString(), traceId: 't1', apiKeyId: null, endpoint: '/v1/chat/completions', clientFormat: 'openai-chat', provider: 'openai', model: 'gpt-4o-mini', requestedModel: null, connectionId: null, combo: null, status: 502, latencyMs: 1, upstreamMs: 1, tokensIn: 0, tokensOut: 0, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: 0, streamed: false, estimated: false, finishReason: null, error: 'upstream failed', userAgent: null, forwardedFor: null, notes: null } as LiveMessage;
    for (const l of listeners) l(e);
    await wait(/^12:00:29 502/m);
    const raw = ui.lastFrame()!;
    const lineOf = (re: RegExp) => raw.split('\n').find((l) => re.test(strip(l))) ?? '';
    // yellow: ESC[33m; red: ESC[31m
    expect(lineOf(/^anthropic\s+1\/1\s+open/)).toContain('\u001b[33m');
    expect(lineOf(/^12:00:29 502/)).toContain('\u001b[31m');
    expect(lineOf(/^openai\s/)).toContain('\u001b[31m');
    ui.unmount();
  });
});
