import { useEffect } from 'react';
import { api } from '../api/client';
import { Empty, ErrorBox, fmt, ok, Section, useAction, useData } from '../ui/kit';

/** How long ago, in words a glance reads: `4 s ago`, `3 min ago`. */
function ago(iso: string): string {
  const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  return s < 120 ? `${s} s ago` : `${Math.round(s / 60)} min ago`;
}

function Health({ healthy }: { healthy: boolean }) {
  return <span className={`badge ${healthy ? 'closed' : 'open'}`}>{healthy ? 'healthy' : 'unhealthy'}</span>;
}

/**
 * Cluster mode (GET /api/cluster, docs/cluster.md): the nodes with their address, version, last heartbeat
 * and health (a dead node can be removed), the database and Redis health (URLs come with passwords masked),
 * and which modules are shared and which stay per node. Refreshed every 5 seconds. One machine: says so.
 */
export function Cluster() {
  const c = useData(() => api('GET /api/cluster'));
  const a = useAction();
  const reload = c.reload;
  useEffect(() => {
    const t = setInterval(() => void reload(), 5_000);
    return () => clearInterval(t);
  }, [reload]);
  const view = c.data;
  if (!view) return <ErrorBox error={c.error} />;
  if (view.mode === 'single') {
    return (
      <>
        <ErrorBox error={c.error} />
        <Section title="Single machine">
          <p>
            This router is a single machine (node {view.nodeId}): its state is in the SQLite file of its state folder. Several routers can share one
            PostgreSQL database and one Redis instead (<code>--database-url</code>, <code>--redis-url</code>; docs/cluster.md).
          </p>
        </Section>
      </>
    );
  }
  const db = view.database;
  return (
    <>
      <ErrorBox error={c.error ?? a.error} />
      <Section title="Nodes">
        <table>
          <thead>
            <tr>
              <th>Node</th>
              <th>Address</th>
              <th>Version</th>
              <th>Last heartbeat</th>
              <th>Health</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {view.nodes.map((n) => (
              <tr key={n.nodeId}>
                <td>
                  {n.nodeId}
                  {n.nodeId === view.nodeId ? ' (this node)' : ''}
                </td>
                <td>{n.url}</td>
                <td>{n.version}</td>
                <td title={fmt.time(n.lastSeenAt)}>{ago(n.lastSeenAt)}</td>
                <td>
                  <Health healthy={n.healthy} />
                </td>
                <td>
                  {n.healthy ? null : (
                    <button
                      type="button"
                      disabled={a.busy}
                      title="Remove it from the list; started again, it lists itself again"
                      onClick={async () => {
                        if (await a.run(() => ok(api('DELETE /api/cluster/nodes/{id}', { params: { id: n.nodeId } })))) await reload();
                      }}
                    >
                      Remove
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section title="Shared state">
        <table>
          <tbody>
            <tr>
              <th>Database</th>
              <td>
                {db.kind} {db.url ?? ''}
              </td>
              <td>
                <Health healthy={db.healthy} />
              </td>
              <td>{db.latencyMs == null ? '–' : `${db.latencyMs} ms`}</td>
            </tr>
            <tr>
              <th>Redis</th>
              <td>{view.redis.configured ? (view.redis.url ?? '') : 'not configured: limits count per node'}</td>
              <td>{view.redis.configured ? <Health healthy={view.redis.healthy} /> : null}</td>
              <td>{view.redis.latencyMs == null ? '–' : `${view.redis.latencyMs} ms`}</td>
            </tr>
          </tbody>
        </table>
      </Section>
      <Section title="Modules">
        <p>
          <strong>Shared</strong> (in the database, the same on every node): {(db.sharedModules ?? []).join(', ') || '–'}
        </p>
        {db.localModules?.length ? (
          <p>
            <strong>Per node</strong> (each node's own SQLite file): {db.localModules.join(', ')}
          </p>
        ) : (
          <Empty>Every module is shared.</Empty>
        )}
      </Section>
    </>
  );
}
