/**
 * The usual set-up of a proxy test: a mock upstream, a real daemon, a proxy key, and one connection per
 * listed provider pointed at the mock's base URL for that provider's wire format.
 */
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from './router-daemon.js';

export interface ProxyEnv {
  mock: MockUpstream;
  router: RouterProcess;
  /** A proxy-scope API key of the daemon. */
  key: string;
  stop(): Promise<void>;
}

/** A connection to create: the provider, its upstream key, and (default: by provider) the mock it talks to. */
export interface MockConnection {
  provider: string;
  apiKey: string;
  wire?: 'openai' | 'anthropic' | 'gemini';
}

/** A provider node to create on the mock's OpenAI base: `<prefix>/<model>` then speaks Chat or Responses. */
export interface MockNode {
  prefix: string;
  apiType?: 'chat' | 'responses';
}

export async function startProxyEnv(connections: readonly MockConnection[], nodes: readonly MockNode[] = []): Promise<ProxyEnv> {
  const mock = await startMockUpstream();
  const router = await startRouter();
  const env: ProxyEnv = {
    mock,
    router,
    key: await router.createKey(),
    async stop() {
      await router.stop();
      await mock.close();
    },
  };
  for (const c of connections) {
    const wire = c.wire ?? (c.provider === 'anthropic' || c.provider === 'gemini' ? c.provider : 'openai');
    const baseUrl = wire === 'anthropic' ? mock.anthropicBase : wire === 'gemini' ? mock.geminiBase : mock.openaiBase;
    await router.addConnection({ provider: c.provider, apiKey: c.apiKey, providerSpecificData: { baseUrl } });
  }
  for (const n of nodes) {
    const apiType = n.apiType ?? 'chat';
    const body = { name: `${apiType === 'responses' ? 'Responses' : 'Chat'} node`, prefix: n.prefix, type: 'openai-compatible', apiType, baseUrl: mock.openaiBase };
    const r = await router.manage('POST', '/api/provider-nodes', body);
    if (r.status !== 201) throw new Error(`node create failed: ${r.status} ${JSON.stringify(r.json)}`);
  }
  return env;
}
