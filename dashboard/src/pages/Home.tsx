import { useMemo, useRef, useState } from 'react';
import { api } from '../api/client';
import { type LiveRequest, useLive } from '../api/live';
import { COLORS, TimeChart } from '../ui/chart';
import { Empty, ErrorBox, fmt, Link, Section, Stat, useData } from '../ui/kit';
import { circuitDisplay, type BreakerView } from '../../../src/shared/circuit';
import { DoctorPanel } from './DoctorPanel';

const HOUR = 3600_000;

/** Daemon status, the doctor's findings, traffic now and over 24 h, providers with circuit and cooldown state, recent errors. */
export function Home() {
  const day = useData(async () => {
    const from = new Date(Date.now() - 24 * HOUR).toISOString();
    const [summary, series, telemetry, resilience, system, errors, connections] = await Promise.all([
      api('GET /api/usage/summary', { query: { from } }),
      api('GET /api/usage/timeseries', { query: { bucket: 'hour', from } }),
      api('GET /api/telemetry/summary', { query: { minutes: 1440 } }),
      api('GET /api/resilience'),
      api('GET /api/system/status'),
      api('GET /api/logs', { query: { status: 'error', limit: 8 } }).catch(() => ({ logs: [] })),
      api('GET /api/providers'),
    ]);
    return { summary, series, telemetry, resilience, system, errors: errors.logs, connections: connections.connections as Array<Record<string, any>> };
  });
  const pending = useRef<ReturnType<typeof setTimeout>>(undefined);
  const [recent, setRecent] = useState<LiveRequest[]>([]);
  const { status, connected } = useLive({
    request: (r) => {
      setRecent((prev) => [r, ...prev].slice(0, 5));
      // Refresh the totals shortly after traffic, at most once a second.
      if (!pending.current) pending.current = setTimeout(() => { pending.current = undefined; void day.reload(); }, 1000);
    },
  });
  const chart = useMemo(() => {
    const pts = day.data?.series.points ?? [];
    return {
      x: pts.map((p) => Date.parse(p.t) / 1000),
      series: [
        { label: 'requests', values: pts.map((p) => p.requests), color: COLORS[0] },
        { label: 'errors', values: pts.map((p) => p.errors), color: COLORS[1] },
      ],
    };
  }, [day.data]);
  const d = day.data;
  return (
    <>
      <ErrorBox error={day.error} />
      <div className="stats" aria-live="polite">
        <Stat label="Daemon" value={connected ? 'running' : 'reconnecting'} sub={d ? `v${d.system.version} · up ${Math.round((status?.uptimeSeconds ?? d.system.uptimeSeconds ?? 0) / 60)} min` : undefined} />
        <Stat label="Requests/s now" value={status ? status.requestsPerSecond.toFixed(2) : '–'} sub={status ? `${status.inFlight} in flight, ${status.openStreams} streaming` : undefined} />
        <Stat label="Requests, 24 h" value={fmt.int(d?.summary.requests)} sub={d ? `${fmt.int(d.summary.errors)} errors` : undefined} />
        <Stat label="Avg latency, 24 h" value={fmt.ms(d?.summary.avgLatencyMs)} />
        <Stat label="Tokens, 24 h" value={fmt.int(d?.summary.tokens.total)} sub={d ? `${fmt.int(d.summary.tokens.input)} in · ${fmt.int(d.summary.tokens.output)} out` : undefined} />
        <Stat label="Cost, 24 h" value={fmt.usd(d?.summary.costUsd)} sub={fmt.unpriced(d?.summary.unpricedRequests)} />
      </div>
      <DoctorPanel />
      <Section title="Last 24 hours">
        <TimeChart title="Requests and errors per hour" x={chart.x} series={chart.series} />
      </Section>
      <div className="grid2">
        <Section title="Providers">
          {d && d.connections.length === 0 ? (
            <Empty>
              No provider connection yet. <Link to="/dashboard/providers">Add one on the Providers page</Link>, then point an SDK at{' '}
              <code>{location.origin}/v1</code> with a key from <Link to="/dashboard/keys">Keys</Link>.
            </Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th>Provider</th>
                  <th>Circuit</th>
                  <th>Cooldowns</th>
                  <th>p50</th>
                  <th>Error rate</th>
                </tr>
              </thead>
              <tbody>
                {[...new Set(d?.connections.map((c) => String(c.provider)))].map((p) => {
                  const circuit = circuitDisplay((d?.resilience.breakers ?? []) as BreakerView[], p);
                  const ids = new Set(d?.connections.filter((c) => c.provider === p).map((c) => c.id));
                  const cooling = ((d?.resilience.cooldowns ?? []) as Array<{ connectionId: string }>).filter((c) => ids.has(c.connectionId)).length;
                  const t = d?.telemetry.providers.find((x) => x.provider === p);
                  return (
                    <tr key={p}>
                      <td>{p}</td>
                      <td>
                        <span className={`badge ${circuit.state}`}>{circuit.text}</span>
                      </td>
                      <td>{cooling || '–'}</td>
                      <td>{fmt.ms(t?.latencyMs.p50)}</td>
                      <td>{t ? fmt.pct(t.errorRate) : '–'}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          )}
        </Section>
        <Section title="Recent errors">
          {d && d.errors.length === 0 ? (
            <Empty>No failed requests in the log.</Empty>
          ) : (
            <ul className="plain">
              {d?.errors.map((e) => (
                <li key={e.id}>
                  <Link to={`/dashboard/requests/${e.traceId}`}>
                    {fmt.time(e.timestamp)} · {e.provider}/{e.model} · {e.status}
                  </Link>
                  <div className="muted small">{e.error}</div>
                </li>
              ))}
            </ul>
          )}
        </Section>
      </div>
      <Section title="Live requests">
        {recent.length === 0 ? (
          <Empty>Requests appear here as they finish.</Empty>
        ) : (
          <ul className="plain">
            {recent.map((r) => (
              <li key={`${r.traceId}${r.timestamp}`}>
                <Link to={`/dashboard/requests/${r.traceId}`}>
                  {r.status} {r.provider}/{r.model}
                </Link>{' '}
                <span className="muted">
                  {fmt.ms(r.latencyMs)} · {fmt.int(r.tokensIn + r.tokensOut)} tokens
                </span>
              </li>
            ))}
          </ul>
        )}
      </Section>
    </>
  );
}
