import { useState } from 'react';
import { api } from '../api/client';
import type { Json } from '../api/replies';
import { Empty, ErrorBox, fmt, Link, Section, Stat, useAction, useData } from '../ui/kit';

const kb = (n: number | null | undefined) => (n == null ? '–' : n >= 1048576 ? `${(n / 1048576).toFixed(1)} MB` : `${(n / 1024).toFixed(1)} KB`);

/**
 * The observability routes (docs/observability.md): how traffic spreads (diversity), conversations
 * (sessions), the database's health, what `router config-tool` changed, and evals.
 */
export function Insights() {
  return (
    <>
      <Diversity />
      <Sessions />
      <Evals />
      <Storage />
      <CliTools />
    </>
  );
}

function Diversity() {
  const [by, setBy] = useState<'provider' | 'model' | 'account'>('provider');
  const d = useData(() => api('GET /api/analytics/diversity', { query: { by } }) as Promise<Json>, [by]);
  const x = d.data;
  return (
    <Section
      title="Traffic spread (24 h)"
      actions={
        <select aria-label="Spread by" value={by} onChange={(e) => setBy(e.target.value as typeof by)}>
          <option value="provider">by provider</option>
          <option value="model">by model</option>
          <option value="account">by account</option>
        </select>
      }
    >
      <ErrorBox error={d.error} />
      {x && x.total === 0 ? <Empty>No traffic in the last 24 hours.</Empty> : null}
      {x && x.total > 0 ? (
        <>
          <div className="stats">
            <Stat label="Concentration (HHI)" value={Number(x.hhi).toFixed(3)} sub="1 = everything on one" />
            <Stat label="Effective count" value={x.effectiveCount == null ? '–' : Number(x.effectiveCount).toFixed(2)} />
            <Stat label="Evenness" value={fmt.pct(x.evenness)} />
          </div>
          <table>
            <thead>
              <tr>
                <th>{by}</th>
                <th>Share of requests</th>
              </tr>
            </thead>
            <tbody>
              {(x.groups as Json[]).map((g) => (
                <tr key={String(g.key)}>
                  <td>{g.label ?? g.key ?? '(none)'}</td>
                  <td>
                    <span className="bar" style={{ width: `${Number(g.share) * 200}px` }} /> {fmt.pct(g.share)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
    </Section>
  );
}

function Sessions() {
  const s = useData(() => api('GET /api/sessions', { query: { limit: 20 } }) as Promise<Json>);
  const list = (s.data?.sessions ?? []) as Json[];
  return (
    <Section title="Sessions">
      <ErrorBox error={s.error} />
      {s.data && list.length === 0 ? (
        <Empty>No session yet: requests that send an X-Router-Session-Id header, or go through a combo with cache affinity, are grouped here as conversations.</Empty>
      ) : null}
      {list.length ? (
        <table>
          <thead>
            <tr>
              <th>Session</th>
              <th>Last active</th>
              <th>Requests</th>
              <th>Errors</th>
              <th>Tokens</th>
              <th title="Share of input tokens read from the provider's prompt cache">Cached</th>
              <th title="Accounts that served it (a combo's cache affinity keeps a conversation on one)">Accounts</th>
              <th>Cost</th>
              <th>Providers</th>
              <th>Latest</th>
            </tr>
          </thead>
          <tbody>
            {list.map((x) => (
              <tr key={x.sessionId}>
                <td>
                  <code>{x.sessionId}</code>
                </td>
                <td>{fmt.time(x.lastAt)}</td>
                <td>{x.traces}</td>
                <td>{x.errors}</td>
                <td>{fmt.int(x.tokensIn + x.tokensOut)}</td>
                <td>{x.tokensIn > 0 ? `${((x.cacheReadTokens / x.tokensIn) * 100).toFixed(1)} %` : '–'}</td>
                <td>{x.accountsUsed}</td>
                <td>{fmt.costTotal(x.costUsd, x.unpricedRequests)}</td>
                <td>{(x.providers ?? []).join(', ')}</td>
                <td>{x.recent?.[0] ? <Link to={`/dashboard/requests/${x.recent[0].traceId}`}>{x.recent[0].model}</Link> : '–'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </Section>
  );
}

function Evals() {
  const e = useData(() => api('GET /api/evals') as Promise<Json>);
  const [runs, setRuns] = useState<Record<string, Json>>({});
  const a = useAction();
  const list = (e.data?.evals ?? []) as Json[];
  return (
    <Section title="Evals">
      <ErrorBox error={e.error ?? a.error} />
      {e.data && list.length === 0 ? <Empty>No eval defined. Create one with `router evals create` (prompts, checks, models), then run it here.</Empty> : null}
      {list.map((x) => (
        <div key={x.id} className="eval">
          <h3>
            {x.name} <span className="muted small">({x.cases?.length ?? 0} cases × {(x.models ?? []).join(', ')})</span>{' '}
            <button
              type="button"
              disabled={a.busy}
              onClick={async () => {
                const r = await a.run(() => api('POST /api/evals/{id}/run', { params: { id: x.id }, body: { wait: true } }));
                if (r) setRuns({ ...runs, [x.id]: r });
              }}
            >
              {a.busy ? 'Running…' : 'Run'}
            </button>
          </h3>
          {(runs[x.id] ?? x.lastRun)?.scores ? (
            <table>
              <thead>
                <tr>
                  <th>Model</th>
                  <th>Score</th>
                  <th>Passed</th>
                  <th>Errors</th>
                  <th>p50</th>
                  <th>Cost</th>
                </tr>
              </thead>
              <tbody>
                {((runs[x.id] ?? x.lastRun).scores as Json[]).map((sc) => (
                  <tr key={sc.model}>
                    <td>{sc.model}</td>
                    <td>{fmt.pct(sc.score)}</td>
                    <td>
                      {sc.passed}/{sc.cases}
                    </td>
                    <td>{sc.errors}</td>
                    <td>{fmt.ms(sc.p50LatencyMs)}</td>
                    <td>{fmt.costTotal(sc.costUsd, sc.unpricedRequests)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}
        </div>
      ))}
    </Section>
  );
}

function Storage() {
  const s = useData(() => api('GET /api/storage/health') as Promise<Json>);
  const a = useAction();
  const x = s.data;
  return (
    <Section
      title="Storage"
      actions={
        <button
          type="button"
          disabled={a.busy}
          onClick={async () => {
            if (confirm('VACUUM blocks the daemon while it runs. Go on?') && (await a.run(() => api('POST /api/storage/vacuum')))) void s.reload();
          }}
        >
          Vacuum
        </button>
      }
    >
      <ErrorBox error={s.error ?? a.error} />
      {x ? (
        <>
          <div className="stats">
            <Stat label="Database" value={kb(x.database?.bytes)} sub={`WAL ${kb(x.database?.walBytes)}`} />
            <Stat label="Free pages" value={fmt.int(x.database?.freePages)} sub={`of ${fmt.int(x.database?.pages)}`} />
            <Stat label="Last vacuum" value={x.lastVacuum ? fmt.time(x.lastVacuum.at) : 'never'} />
            <Stat label="Last backup" value={x.lastBackup ? fmt.time(x.lastBackup.createdAt) : 'none'} sub={x.backups ? `${x.backups.count} backups, ${kb(x.backups.bytes)}` : undefined} />
            <Stat label="Free disk" value={kb(x.disk?.freeBytes)} />
          </div>
          <details>
            <summary>Rows per table</summary>
            <table>
              <tbody>
                {((x.tables ?? []) as Json[]).map((t) => (
                  <tr key={t.name}>
                    <td>{t.name}</td>
                    <td>{fmt.int(t.rows)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </details>
        </>
      ) : null}
    </Section>
  );
}

function CliTools() {
  const c = useData(() => api('GET /api/cli-tools/logs') as Promise<Json>);
  const list = (c.data?.changes ?? []) as Json[];
  return (
    <Section title="Coding tools configured">
      <ErrorBox error={c.error} />
      {c.data && list.length === 0 ? <Empty>`router config-tool claude-code` (or codex, opencode, cline) points a coding tool at router; its changes are listed here.</Empty> : null}
      {list.length ? (
        <table>
          <thead>
            <tr>
              <th>When</th>
              <th>Tool</th>
              <th>Action</th>
              <th>Files</th>
            </tr>
          </thead>
          <tbody>
            {list.map((x) => (
              <tr key={x.id}>
                <td>{fmt.time(x.at)}</td>
                <td>{x.tool}</td>
                <td>{x.action}</td>
                <td className="small">{(x.files as Json[]).map((f) => `${f.action} ${f.path}`).join(', ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </Section>
  );
}
