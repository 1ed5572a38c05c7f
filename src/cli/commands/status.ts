import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { ClusterReply } from '../../shared/cluster.js';
import type { HealthReply, StatusReply } from '../../shared/wire.js';
import { DaemonClient } from '../client.js';
import { CliError, type Io } from '../io.js';
import { resolveTarget, type CommonOptions } from '../target.js';
import { uptime } from '../format.js';
import { examples, withCommon, type CommandContext } from '../common.js';

/**
 * What `router status` reports. `accepted: false` is a daemon that answers at the address but refuses this
 * CLI's token: it serves another state folder or runs as another user. `cluster`: in cluster mode, the
 * daemon's GET /api/cluster (nodes, database and Redis health, URLs without passwords).
 */
export type StatusView = StatusReply & { accepted: boolean; cluster?: ClusterReply };

const NOT_RUNNING: StatusView = { running: false, accepted: false, pid: null, url: null, version: null, uptimeSeconds: null, home: null };

/**
 * Asks the daemon at the resolved address (pid file, or the defaults when there is none) for its status.
 * A refused connection is "not running"; a 401/403 is a daemon that runs but does not accept this home's
 * token, whose version the public health route still tells.
 */
export async function readStatus(opts: CommonOptions): Promise<StatusView> {
  const target = resolveTarget(opts);
  const client = new DaemonClient(target, () => {});
  try {
    // Host facts (Node, platform, database...) stay in the API reply; `router status --json` keeps its shape.
    const { host: _host, ...s } = await client.request<StatusReply>('GET', '/api/system/status', undefined, 3_000);
    if (s.mode !== 'cluster') return { ...s, accepted: true };
    const cluster = await client.request<ClusterReply>('GET', '/api/cluster', undefined, 3_000).catch(() => undefined);
    return { ...s, accepted: true, ...(cluster ? { cluster } : {}) };
  } catch (err) {
    const status = (err as CliError).status;
    if (status !== 401 && status !== 403) return NOT_RUNNING;
    const health = await client.request<HealthReply>('GET', '/api/health', undefined, 3_000).catch(() => undefined);
    return { ...NOT_RUNNING, running: true, url: target.url, pid: target.running?.pid ?? null, version: health?.version ?? null };
  }
}

function describe(s: StatusView, ownHome: string): string {
  if (!s.running) return 'router is not running';
  if (!s.accepted) {
    return [
      `a router daemon is running at ${s.url}${s.version ? ` (version ${s.version})` : ''}, but this home's CLI token is not accepted:`,
      `it serves another --home or runs as another user (this CLI uses ${ownHome}).`,
    ].join('\n');
  }
  const other = s.home && resolve(s.home) !== resolve(ownHome) ? ` (not ${ownHome})` : '';
  return [
    `router is running at ${s.url}`,
    `  pid      ${s.pid}`,
    `  version  ${s.version}`,
    `  home     ${s.home}${other}`,
    ...(s.nodeId ? [`  node     ${s.nodeId} (${s.mode === 'cluster' ? 'cluster' : 'single machine'})`] : []),
    ...(s.cluster ? clusterLines(s.cluster) : []),
    `  up       ${uptime(s.uptimeSeconds ?? 0)}`,
  ].join('\n');
}

/** Cluster mode: how many nodes and how many healthy, the database and Redis (URLs come masked). */
function clusterLines(c: ClusterReply): string[] {
  const health = (healthy: boolean, ms: number | null) => `${healthy ? 'healthy' : 'UNHEALTHY'}${ms !== null ? ` (${ms} ms)` : ''}`;
  const healthy = c.nodes.filter((n) => n.healthy).length;
  return [
    `  nodes    ${c.nodes.length} (${healthy} healthy${healthy < c.nodes.length ? `, ${c.nodes.length - healthy} not answering: router cluster nodes` : ''})`,
    `  database ${c.database.kind}${c.database.url ? ` ${c.database.url}` : ''} ${health(c.database.healthy, c.database.latencyMs)}`,
    `  redis    ${c.redis.configured ? `${c.redis.url ?? ''} ${health(c.redis.healthy, c.redis.latencyMs)}` : 'not configured (limits count per node)'}`,
  ];
}

/**
 * Prints whether the daemon runs. Exit 0 when it runs and accepts this CLI, 1 otherwise (not running, or
 * running for another home or user), so `router status && ...` means "the CLI can manage it".
 */
export async function statusCommand(opts: CommonOptions & { json?: boolean }, io: Io): Promise<number> {
  const s = await readStatus(opts);
  if (opts.json) io.out(JSON.stringify(s));
  else io.out(describe(s, resolveTarget(opts).paths.home));
  return s.running && s.accepted ? 0 : 1;
}

export function register(program: Command, ctx: CommandContext): void {
  examples(withCommon(program.command('status')), ['router status', 'router status --json', 'router status >/dev/null && echo up   # exit 1 when not running'])
    .description('show whether the daemon is running: URL, pid, version, state folder, uptime')
    .option('--json', 'print {running, accepted, pid, url, version, uptimeSeconds, home, mode, nodeId} (and cluster: GET /api/cluster in cluster mode)')
    .action(ctx.run((opts) => statusCommand(opts, ctx.io)));
}
