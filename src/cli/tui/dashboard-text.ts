/** The dashboard's provider lines (pure; no Ink): shared by the TUI and the plain snapshot. */
import { circuitDisplay } from '../../shared/circuit.js';
import { cell } from '../format.js';
import type { PublicConnection, ResilienceReply } from '../types.js';

export interface ProviderLine {
  provider: string;
  active: number;
  total: number;
  circuit: string;
  cooldowns: number;
  requests: number;
  errors: number;
}

/** One row per provider known from connections, breakers or traffic. */
export function providerLines(
  connections: readonly PublicConnection[],
  resilience: ResilienceReply | undefined,
  traffic: ReadonlyMap<string, { requests: number; errors: number }>,
  now: number,
): ProviderLine[] {
  const names = new Set<string>([...connections.map((c) => c.provider), ...(resilience?.breakers.map((b) => b.provider) ?? []), ...traffic.keys()]);
  const providerOfConn = new Map(connections.map((c) => [c.id, c.provider]));
  return [...names].sort().map((provider) => {
    const conns = connections.filter((c) => c.provider === provider);
    const circuit = circuitDisplay(resilience?.breakers ?? [], provider, { now, countdown: true }).text;
    return {
      provider,
      active: conns.filter((c) => c.isActive).length,
      total: conns.length,
      circuit,
      cooldowns: resilience?.cooldowns.filter((c) => providerOfConn.get(c.connectionId) === provider).length ?? 0,
      requests: traffic.get(provider)?.requests ?? 0,
      errors: traffic.get(provider)?.errors ?? 0,
    };
  });
}

export function providerRow(p: ProviderLine, width: number): string {
  const name = Math.max(12, width - 46);
  return `${cell(p.provider, name)} ${cell(`${p.active}/${p.total}`, 5, 'right')}  ${cell(p.circuit, 18)} ${cell(String(p.cooldowns), 4, 'right')} ${cell(String(p.requests), 6, 'right')} ${cell(String(p.errors), 5, 'right')}`;
}

export function providerHeader(width: number): string {
  const name = Math.max(12, width - 46);
  return `${cell('PROVIDERS', name)} ${cell('CONNS', 5, 'right')}  ${cell('CIRCUIT', 18)} ${cell('COOL', 4, 'right')} ${cell('REQ', 6, 'right')} ${cell('ERR', 5, 'right')}`;
}

