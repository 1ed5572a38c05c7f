import { statSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { listenUrl } from '../../shared/paths.js';
import type { HostFacts } from '../../shared/wire.js';
import type { Services } from '../services.js';

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** Addresses a wildcard bind answers on: every configured interface address of that family. */
function listening(host: string, port: number): HostFacts['listening'] {
  const wildcard = host === '0.0.0.0' || host === '::';
  if (!wildcard) return [{ host, port, url: listenUrl(host, port) }];
  const out: HostFacts['listening'] = [];
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) {
      if (host === '0.0.0.0' && a.family !== 'IPv4') continue;
      out.push({ host: a.address, port, url: listenUrl(a.address, port) });
    }
  }
  return out;
}

/** Host facts for `GET /api/system/status` (cheap: two stats and the interface list). */
export function hostFacts(services: Services): HostFacts {
  const db = services.paths.db;
  return {
    node: process.version,
    platform: process.platform,
    arch: process.arch,
    database: { path: db, sizeBytes: sizeOf(db) + sizeOf(`${db}-wal`) },
    dataFolder: services.paths.home,
    uptimeSeconds: Math.floor((Date.now() - services.startedAt) / 1000),
    listening: listening(services.listen.host, services.listen.port),
  };
}
