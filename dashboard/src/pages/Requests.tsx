import { useState } from 'react';
import { api } from '../api/client';
import { useLive } from '../api/live';
import type { LogEntry } from '../api/replies';
import { navigate } from '../nav';
import { Empty, ErrorBox, fmt, Link, Section, useAction, useData } from '../ui/kit';

type Row = Omit<LogEntry, 'id'> & { id?: number };
const FILTERS = ['provider', 'model', 'status', 'key'] as const;

/** The request log with filters (kept in the address), live; a request's detail by its trace id. */
export function Requests({ traceId, search }: { traceId: string; search: URLSearchParams }) {
  if (traceId) return <RequestDetail traceId={traceId} />;
  return <RequestLog search={search} />;
}

function RequestLog({ search }: { search: URLSearchParams }) {
  const filters = Object.fromEntries(FILTERS.map((f) => [f, search.get(f) ?? ''])) as Record<(typeof FILTERS)[number], string>;
  const [draft, setDraft] = useState(filters);
  const [more, setMore] = useState<Row[]>([]);
  const log = useData(async () => {
    setMore([]);
    const q = Object.fromEntries(Object.entries(filters).filter(([, v]) => v));
    return api('GET /api/logs', { query: { ...q, limit: 50 } });
  }, [search.toString()]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [live, setLive] = useState<Row[]>([]);
  const filtered = Object.values(filters).some(Boolean);
  useLive({
    request: (r) => {
      if (!filtered) setLive((prev) => [r, ...prev].slice(0, 200));
    },
  });
  const rows: Row[] = [...(filtered ? [] : live), ...(log.data?.logs ?? []), ...more];
  const seen = new Set<string>();
  const unique = rows.filter((r) => {
    const k = `${r.traceId}|${r.timestamp}|${r.provider}|${r.status}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  const next = more.length ? cursor : (log.data?.nextCursor ?? null);
  return (
    <>
      <form
        className="toolbar"
        aria-label="Filters"
        onSubmit={(e) => {
          e.preventDefault();
          const q = new URLSearchParams(Object.entries(draft).filter(([, v]) => v));
          setLive([]);
          navigate(`/dashboard/requests${q.size ? `?${q}` : ''}`);
        }}
      >
        {FILTERS.map((f) => (
          <label key={f}>
            {f}{' '}
            <input value={draft[f]} size={10} placeholder={f === 'status' ? '4xx, error…' : f === 'key' ? 'name or id' : 'any'} onChange={(e) => setDraft({ ...draft, [f]: e.target.value.trim() })} />
          </label>
        ))}
        <button type="submit">Filter</button>
      </form>
      <ErrorBox error={log.error} />
      <Section title="Request log">
        {log.data && unique.length === 0 ? (
          <Empty>{filtered ? 'No request matches these filters.' : 'No request yet. Send one to /v1/chat/completions with a key, or try the Playground.'}</Empty>
        ) : (
          <table className="log">
            <thead>
              <tr>
                <th>Time</th>
                <th>Status</th>
                <th>Model</th>
                <th>Combo</th>
                <th>Endpoint</th>
                <th>Latency</th>
                <th>Tokens</th>
                <th>Cost</th>
              </tr>
            </thead>
            <tbody>
              {unique.map((r) => (
                <tr key={`${r.traceId}${r.timestamp}${r.provider}${r.status}`} className={r.status >= 400 ? 'failed' : undefined}>
                  <td>
                    <Link to={`/dashboard/requests/${r.traceId}`}>{new Date(r.timestamp).toLocaleTimeString()}</Link>
                  </td>
                  <td>{r.status}</td>
                  <td>
                    {r.provider}/{r.model}
                  </td>
                  <td>{r.combo ?? ''}</td>
                  <td>{r.endpoint}</td>
                  <td>{fmt.ms(r.latencyMs)}</td>
                  <td>
                    {fmt.int(r.tokensIn)} / {fmt.int(r.tokensOut)}
                  </td>
                  <td>{fmt.cost(r.costUsd)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {next ? (
          <button
            type="button"
            onClick={async () => {
              const q = Object.fromEntries(Object.entries(filters).filter(([, v]) => v));
              const page = await api('GET /api/logs', { query: { ...q, limit: 50, cursor: next } });
              setMore((m) => [...m, ...page.logs]);
              setCursor(page.nextCursor);
            }}
          >
            Older requests
          </button>
        ) : null}
      </Section>
    </>
  );
}

/** `router;dur=1.2, upstream;dur=300` -> [['router', 1.2], ['upstream', 300]]. */
function parseServerTiming(v: string | undefined): Array<[string, number]> {
  if (!v) return [];
  return v.split(',').flatMap((part) => {
    const [name, ...params] = part.trim().split(';');
    const dur = params.map((p) => /^\s*dur=([\d.]+)/.exec(p)?.[1]).find(Boolean);
    return name && dur ? [[name.trim(), Number(dur)] as [string, number]] : [];
  });
}

function RequestDetail({ traceId }: { traceId: string }) {
  const attempts = useData(async () => (await api('GET /api/logs', { query: { limit: 500 } })).logs.filter((l) => l.traceId === traceId), [traceId]);
  const trace = useData(() => api('GET /api/logs/traces/{traceId}', { params: { traceId } }), [traceId]);
  const enable = useAction();
  const translation = useData(() => api('GET /api/translator/history', { query: { traceId, limit: 10 } }), [traceId]);
  const t = trace.data as
    | { client: { request: Side; response: Side }; upstream: { url?: string; request: Side; response: Side } }
    | undefined;
  const captured = parseServerTiming(t?.client.response.headers['server-timing']);
  // Without a captured Server-Timing header (capture off, or a stream), the log row has the same split.
  const row = attempts.data?.find((a) => a.status < 400) ?? attempts.data?.[0];
  const timing: Array<[string, number]> =
    captured.length || !row ? captured : row.upstreamMs == null ? [['total', row.latencyMs]] : [['router', Math.max(0, row.latencyMs - row.upstreamMs)], ['upstream', row.upstreamMs]];
  return (
    <>
      <p>
        <Link to="/dashboard/requests">← All requests</Link> · trace <code>{traceId}</code>
      </p>
      <Section title="Attempts">
        <ErrorBox error={attempts.error} />
        {attempts.data?.length === 0 ? <Empty>This trace is not in the last 500 log rows.</Empty> : null}
        {attempts.data?.map((a) => (
          <dl className="facts" key={`${a.id}`}>
            <dt>Status</dt>
            <dd>{a.status}</dd>
            <dt>Model</dt>
            <dd>
              {a.provider}/{a.model} {a.combo ? `(combo ${a.combo})` : ''} {a.requestedModel ? `, asked for ${a.requestedModel}` : ''}
            </dd>
            <dt>Latency</dt>
            <dd>
              {fmt.ms(a.latencyMs)} (upstream {fmt.ms(a.upstreamMs)})
            </dd>
            <dt>Tokens</dt>
            <dd>
              {a.tokensIn} in, {a.tokensOut} out, {a.cacheReadTokens} cache read, {a.reasoningTokens} reasoning {a.estimated ? '(estimated)' : ''}
            </dd>
            <dt>Cost</dt>
            <dd>
              {fmt.cost(a.costUsd)}
              {a.costSource ? ` (${a.costSource}${a.priceVersion ? `, ${a.priceVersion}` : ''})` : ''}
            </dd>
            {a.error ? (
              <>
                <dt>Error</dt>
                <dd className="error">{a.error}</dd>
              </>
            ) : null}
          </dl>
        ))}
      </Section>
      <Section title="Timing">
        <p className="muted small">{captured.length ? 'From the reply\'s Server-Timing header.' : 'From the request log (no Server-Timing header captured).'}</p>
        {timing.length ? (
          <div className="timing">
            {timing.map(([name, dur]) => (
              <div key={name} className="timing-row">
                <span>{name}</span>
                <span className="bar" style={{ width: `${Math.max(2, (dur / Math.max(...timing.map((x) => x[1]), 1)) * 300)}px` }} />
                <span>{fmt.ms(dur)}</span>
              </div>
            ))}
          </div>
        ) : (
          <Empty>No timing known for this request.</Empty>
        )}
      </Section>
      <Section title="Translation">
        <ErrorBox error={translation.error} />
        {translation.data && (translation.data as { entries: unknown[] }).entries.length === 0 ? (
          <Empty>
            {(translation.data as { recording: boolean }).recording
              ? 'No translation recorded for this request (only the last ones are kept).'
              : 'Translations are recorded while traffic capture is on (setting captureTraffic).'}
          </Empty>
        ) : null}
        {((translation.data as { entries?: Array<Record<string, any>> } | undefined)?.entries ?? []).map((t) => (
          <div key={t.id}>
            <p>
              {t.clientFormat} → {t.upstreamFormat} {t.passthrough ? '(passed through)' : '(translated)'} · {t.provider}/{t.model} · {t.status}
            </p>
            {t.dropped?.length ? <p className="muted">Not sent upstream: {t.dropped.join(', ')}</p> : null}
          </div>
        ))}
      </Section>
      <Section title="Captured trace">
        {trace.error ? (
          <>
            <ErrorBox error={trace.error} />
            {/captureTraffic/.test(trace.error) ? (
              <button
                type="button"
                onClick={async () => {
                  if (await enable.run(() => api('PATCH /api/settings', { body: { captureTraffic: true } }))) void trace.reload();
                }}
              >
                Turn traffic capture on (for the next requests)
              </button>
            ) : null}
            <ErrorBox error={enable.error} />
          </>
        ) : null}
        {t ? (
          <div className="grid2">
            <Exchange title="Client request" side={t.client.request} />
            <Exchange title="Client response" side={t.client.response} />
            <Exchange title={`Upstream request ${t.upstream.url ?? ''}`} side={t.upstream.request} />
            <Exchange title="Upstream response" side={t.upstream.response} />
          </div>
        ) : null}
      </Section>
    </>
  );
}

interface Side {
  headers: Record<string, string>;
  body: string | null;
}

function pretty(body: string | null): string {
  if (body == null) return '';
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

function Exchange({ title, side }: { title: string; side: Side }) {
  return (
    <div className="exchange">
      <h3>{title}</h3>
      <table className="headers">
        <tbody>
          {Object.entries(side.headers).map(([k, v]) => (
            <tr key={k}>
              <th>{k}</th>
              <td>{v}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {side.body ? <pre className="json">{pretty(side.body)}</pre> : <p className="muted">(no body)</p>}
    </div>
  );
}
