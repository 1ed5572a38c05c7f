import { useRef } from 'react';
import { api } from '../api/client';
import { useLive } from '../api/live';
import { Empty, ErrorBox, fmt, Section, useAction, useData } from '../ui/kit';

/** Circuit breakers (reset one or all) and cooldowns (clear one or all), refreshed as traffic flows. */
export function Resilience() {
  const r = useData(() => api('GET /api/resilience'));
  const conns = useData(() => api('GET /api/providers'));
  const a = useAction();
  const t = useRef<ReturnType<typeof setTimeout>>(undefined);
  useLive({
    request: () => {
      if (!t.current) t.current = setTimeout(() => { t.current = undefined; void r.reload(); }, 1500);
    },
  });
  const names = new Map(((conns.data?.connections ?? []) as Array<{ id: string; name: string; provider: string }>).map((c) => [c.id, `${c.provider} · ${c.name}`]));
  const breakers = (r.data?.breakers ?? []) as Array<{ provider: string; providerId: string; model?: string | null; state: string; failures?: number; openUntil: string | null }>;
  const cooldowns = (r.data?.cooldowns ?? []) as Array<{ connectionId: string; model: string; remainingSeconds: number; reason: string }>;
  return (
    <>
      <ErrorBox error={r.error ?? a.error} />
      <Section
        title="Circuit breakers"
        actions={
          <button type="button" onClick={async () => (await a.run(() => api('POST /api/resilience/reset', { body: {} }))) && r.reload()}>
            Reset all
          </button>
        }
      >
        {breakers.length === 0 ? <Empty>No breaker has recorded failures: every provider is closed (healthy).</Empty> : null}
        {breakers.length ? (
          <table>
            <thead>
              <tr>
                <th>Provider</th>
                <th>Model</th>
                <th>State</th>
                <th>Open until</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {breakers.map((b, i) => (
                <tr key={i}>
                  <td>{b.provider}</td>
                  <td>{b.model ?? 'all'}</td>
                  <td>
                    <span className={`badge ${b.state}`}>{b.state}</span>
                  </td>
                  <td>{fmt.time(b.openUntil)}</td>
                  <td>
                    <button type="button" onClick={async () => (await a.run(() => api('POST /api/resilience/reset', { body: { provider: b.providerId } }))) && r.reload()}>
                      Reset
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
      </Section>
      <Section
        title="Cooldowns"
        actions={
          <button type="button" onClick={async () => (await a.run(() => api('DELETE /api/resilience/model-cooldowns'))) && r.reload()}>
            Clear all
          </button>
        }
      >
        {cooldowns.length === 0 ? <Empty>No account is cooling down.</Empty> : null}
        {cooldowns.length ? (
          <table>
            <thead>
              <tr>
                <th>Connection</th>
                <th>Model</th>
                <th>Left</th>
                <th>Reason</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {cooldowns.map((c) => (
                <tr key={`${c.connectionId}${c.model}`}>
                  <td>{names.get(c.connectionId) ?? c.connectionId}</td>
                  <td>{c.model}</td>
                  <td>{c.remainingSeconds} s</td>
                  <td>{c.reason}</td>
                  <td>
                    <button
                      type="button"
                      onClick={async () => (await a.run(() => api('DELETE /api/resilience/model-cooldowns', { query: { connectionId: c.connectionId, model: c.model } }))) && r.reload()}
                    >
                      Clear
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
      </Section>
    </>
  );
}
