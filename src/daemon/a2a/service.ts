import { A2A_VERSION_HEADER, AgentCard } from '@a2a-js/sdk';
import { duplicateInterfacesForLegacy, isLegacyJsonRpcMethod } from '@a2a-js/sdk/compat/v0_3';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { DefaultRequestHandler, JsonRpcTransportHandler, ServerCallContext, validateVersion } from '@a2a-js/sdk/server';
import type { AuthInfo } from '../auth/pipeline.js';
import { callerName } from '../mcp/audit.js';
import type { Services } from '../services.js';
import { A2A_AUTH_KEY, RouterAgentExecutor } from './agent.js';
import { CANCELED_STATE } from './port.js';
import { A2A_TASKS_TOPIC, SqlTaskStore } from './store.js';
import { A2A_PATH } from './routes.js';

/**
 * The A2A server (docs/agents.md) from the `@a2a-js/sdk` pieces that do not depend on a web framework: the
 * SDK's DefaultRequestHandler (task lifecycle, event buses, cancellation) over router's task store (the A2A port) and
 * agent executor, and its JSON-RPC transport handlers: the v1.0 one (`SendMessage`, `GetTask`...) and the
 * v0.3 compat one (`message/send`, `message/stream`, `tasks/get`, `tasks/cancel`), chosen by method name.
 */


const SKILL = {
  id: 'answer',
  name: 'Answer',
  description: "Answers a text request with the model or combo router is configured to use for A2A (setting agents.a2aModel).",
  tags: ['chat', 'router'],
  examples: ['Summarize the trade-offs of SQLite WAL mode in three bullet points.'],
};

function coreCard(origin: string, version: string): AgentCard {
  const url = `${origin}${A2A_PATH}`;
  return {
    name: 'router',
    description: 'A local model-routing proxy acting as an agent: it answers each message with its configured model or combo.',
    supportedInterfaces: duplicateInterfacesForLegacy([{ url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }], ['JSONRPC']),
    provider: undefined,
    version,
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {
      bearer: { scheme: { $case: 'httpAuthSecurityScheme', value: { description: "A router API key with the 'proxy' scope", scheme: 'Bearer', bearerFormat: '' } } },
    },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ ...SKILL, inputModes: ['text/plain'], outputModes: ['text/plain'], securityRequirements: [] }],
    signatures: [],
  };
}

/** The v0.3 agent card (what `/.well-known/agent.json` and clients without A2A-Version get). */
function legacyCard(origin: string, version: string) {
  const url = `${origin}${A2A_PATH}`;
  return {
    protocolVersion: '0.3.0',
    name: 'router',
    description: 'A local model-routing proxy acting as an agent: it answers each message with its configured model or combo.',
    url,
    preferredTransport: 'JSONRPC',
    additionalInterfaces: [{ url, transport: 'JSONRPC' }],
    version,
    capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: "A router API key with the 'proxy' scope" } },
    security: [{ bearer: [] }],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [SKILL],
  };
}

export class A2aService {
  private readonly handler: DefaultRequestHandler;
  private readonly v1: JsonRpcTransportHandler;
  private readonly legacy: LegacyJsonRpcTransportHandler;
  private readonly card: AgentCard;

  constructor(private readonly services: Services) {
    this.card = coreCard(services.listen.url.replace(/\/$/, ''), services.version);
    const executor = new RouterAgentExecutor(services);
    this.handler = new DefaultRequestHandler(this.card, new SqlTaskStore(services.a2aTasks, services.changes), executor);
    // A cancel stored by another node: the tasks this node is still answering are looked up and stopped.
    services.changes.subscribe(A2A_TASKS_TOPIC, async () => {
      const ids = executor.runningTasks();
      if (ids.length === 0) return;
      const states = await services.a2aTasks.states(ids);
      executor.canceledElsewhere(ids.filter((id) => states.get(id) === CANCELED_STATE));
    });
    this.v1 = new JsonRpcTransportHandler(this.handler);
    this.legacy = new LegacyJsonRpcTransportHandler(this.handler);
  }

  /**
   * The agent card for a request: v1.0 (proto JSON) when the client asks for A2A-Version 1.x, else v0.3.
   * URLs use the origin the client reached router at (its Host was checked by the request guard).
   */
  cardFor(origin: string, requested: string | null): unknown {
    if (requested && /^1(\.\d+)?$/.test(requested.trim())) return AgentCard.toJSON(coreCard(origin, this.services.version));
    return legacyCard(origin, this.services.version);
  }

  /** One JSON-RPC request: a response envelope, or an async stream of them (message/stream). */
  async handle(body: unknown, auth: AuthInfo, headers: Headers): Promise<unknown> {
    const method = (body as { method?: unknown } | null)?.method;
    const legacy = typeof method === 'string' && isLegacyJsonRpcMethod(method);
    const requestedVersion = headers.get(A2A_VERSION_HEADER) ?? (legacy ? '0.3' : '1.0');
    const context = new ServerCallContext({
      user: { isAuthenticated: true, userName: callerName(auth) },
      requestedVersion,
      state: new Map<string, unknown>([[A2A_AUTH_KEY, auth]]),
    });
    if (legacy) return this.legacy.handle(body as Record<string, unknown>, context);
    try {
      validateVersion(context.requestedVersion, this.card, 'JSONRPC');
    } catch (err) {
      return { jsonrpc: '2.0', id: (body as { id?: unknown } | null)?.id ?? null, error: JsonRpcTransportHandler.mapToJSONRPCError(err) };
    }
    return this.v1.handle(body as Record<string, unknown>, context);
  }
}

const services2a2a = new WeakMap<Services, A2aService>();
/** The daemon's A2A service (one per services: running tasks and their event buses live in it). */
export function a2aFor(services: Services): A2aService {
  let s = services2a2a.get(services);
  if (!s) {
    s = new A2aService(services);
    services2a2a.set(services, s);
  }
  return s;
}
