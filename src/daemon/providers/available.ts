import { comboCatalog } from '../combos/catalog.js';
import type { ComboStore } from '../combos/store.js';
import type { ConnectionStore } from './connections.js';
import type { ProviderDirectory } from './directory.js';
import type { SyncedModels } from './models.js';
import { parseModelList } from './sync.js';
import { boundedText } from '../net/bounded-read.js';
import type { ModelInfo, ProviderDef } from './types.js';

/** How long `GET /api/models` waits for a local server (Ollama, LM Studio) before calling it unreachable. */
export const LOCAL_PROBE_TIMEOUT_MS = 500;

/** Why a model is (or is not) usable now. */
export type ModelAvailability = 'combo' | 'connected' | 'local' | 'no connection' | 'unreachable';

/** One row of `GET /api/models`. */
export interface ModelRow {
  id: string;
  provider: string;
  contextLength: number | null;
  /** `static` (shipped list), `synced` (fetched upstream), `local` (listed by the running local server) or `combo`. */
  source: 'static' | 'synced' | 'local' | 'combo';
  available: boolean;
  availability: ModelAvailability;
}

/**
 * Asks a no-auth local server for its models (`GET {base}/models`, OpenAI shape) with a short timeout:
 * the models it really has, or undefined when nothing answers.
 */
export async function probeLocal(baseUrl: string, timeoutMs = LOCAL_PROBE_TIMEOUT_MS): Promise<ModelInfo[] | undefined> {
  try {
    const res = await fetch(`${baseUrl.replace(/\/+$/, '')}/models`, { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) return undefined;
    // A model list is kilobytes: 8 MiB is ample, and bounds what a local server can make router hold.
    return parseModelList('openai-chat', JSON.parse(await boundedText(res, 8 * 1024 * 1024)));
  } catch {
    return undefined;
  }
}

/**
 * The model catalog for admin tools, with what is usable now: combos, providers with an active connection,
 * and local servers that answer a probe (their own model list). With `all`, every provider's models too,
 * marked unavailable (`no connection`, `unreachable`). Management only: probes never run on a proxied request.
 */
export async function modelCatalog(services: { combos: ComboStore; providers: ProviderDirectory; connections: ConnectionStore; syncedModels: SyncedModels }, all: boolean): Promise<ModelRow[]> {
  const rows: ModelRow[] = comboCatalog(services).map((c) => ({
    id: c.id,
    provider: 'combo',
    contextLength: c.context_length ?? null,
    source: 'combo',
    available: true,
    availability: 'combo',
  }));
  const defs = services.providers.all();
  // Local servers are probed in parallel: the reply waits for the slowest probe at most, not their sum.
  const probes = new Map(
    await Promise.all(
      defs
        .filter((def) => def.kind === 'local')
        .map(async (def) => [def.id, await probeLocal(localBase(services, def))] as const),
    ),
  );
  for (const def of defs) {
    const id = services.providers.publicId(def);
    const row = (m: ModelInfo, source: ModelRow['source'], availability: ModelAvailability): ModelRow => ({
      id: `${id}/${m.id}`,
      provider: def.id,
      contextLength: m.contextLength ?? null,
      source,
      available: availability === 'connected' || availability === 'local',
      availability,
    });
    const listed = services.providers.models(def);
    const source = services.syncedModels.get(def.id) ? 'synced' : 'static';
    if (def.kind === 'local') {
      const found = probes.get(def.id);
      if (found) rows.push(...found.map((m) => row(m, 'local', 'local')));
      else if (all) rows.push(...listed.map((m) => row(m, source, 'unreachable')));
      continue;
    }
    const connected = services.connections.active(def.id).length > 0;
    if (connected) rows.push(...listed.map((m) => row(m, source, 'connected')));
    else if (all) rows.push(...listed.map((m) => row(m, source, 'no connection')));
  }
  return rows;
}

/** Where a local provider listens: its active connection's base URL override, else its default. */
function localBase(services: { connections: ConnectionStore }, def: ProviderDef): string {
  const override = services.connections.active(def.id)[0]?.providerSpecificData.baseUrl;
  return typeof override === 'string' ? override : def.baseUrl;
}
