import { useState } from 'react';
import { api } from '../api/client';
import { CopyButton, Empty, ErrorBox, Field, fieldError, fmt, Section, useAction, useData, ok } from '../ui/kit';

/** Webhooks: list, add (secret shown once), enable/disable, test delivery, last delivery state. */
export function Webhooks() {
  const hooks = useData(() => api('GET /api/webhooks'));
  const [url, setUrl] = useState('');
  const [kind, setKind] = useState<'custom' | 'slack' | 'discord' | 'telegram'>('custom');
  const [events, setEvents] = useState('*');
  const [secret, setSecret] = useState<string>();
  const [results, setResults] = useState<Record<string, string>>({});
  const a = useAction();
  const [open, setOpen] = useState<string>();
  const [historyTick, setHistoryTick] = useState(0);
  return (
    <>
      {secret ? (
        <section className="card reveal">
          <p>Signing secret (shown once):</p>
          <code className="secret">{secret}</code> <CopyButton text={secret} />
        </section>
      ) : null}
      <Section title="Webhooks">
        <ErrorBox error={hooks.error} />
        {hooks.data?.webhooks.length === 0 ? <Empty>No webhook. Add a URL below to receive events such as request.failed and provider.error.</Empty> : null}
        {hooks.data?.webhooks.length ? (
          <table>
            <thead>
              <tr>
                <th>URL</th>
                <th>Kind</th>
                <th>Events</th>
                <th>Last delivery</th>
                <th>Failures</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {hooks.data.webhooks.map((w) => (
                <tr key={w.id} className={w.enabled ? undefined : 'inactive'}>
                  <td>{w.url}</td>
                  <td>{w.kind}</td>
                  <td>{w.events.join(', ')}</td>
                  <td>
                    {w.last_triggered_at ? `${fmt.time(w.last_triggered_at)} → ${w.last_status === 0 ? 'network error' : w.last_status}` : 'never'}
                    {results[w.id] ? <div role="status">{results[w.id]}</div> : null}
                  </td>
                  <td>{w.failure_count}</td>
                  <td className="actions">
                    <button type="button" aria-expanded={open === w.id} onClick={() => setOpen(open === w.id ? undefined : w.id)}>
                      History
                    </button>
                    <button
                      type="button"
                      onClick={async () => {
                        const r: any = await a.run(() => api('POST /api/webhooks/{id}/test', { params: { id: w.id } }));
                        if (r) setResults({ ...results, [w.id]: r.delivered ? `test delivered (${r.status})` : `test failed: ${r.error ?? r.status}` });
                        setHistoryTick((t) => t + 1);
                        void hooks.reload();
                      }}
                    >
                      Test
                    </button>
                    <button
                      type="button"
                      onClick={async () => {
                        if (await a.run(() => api('PUT /api/webhooks/{id}', { params: { id: w.id }, body: { enabled: !w.enabled } }))) void hooks.reload();
                      }}
                    >
                      {w.enabled ? 'Disable' : 'Enable'}
                    </button>
                    <button
                      type="button"
                      className="danger"
                      onClick={async () => {
                        if (confirm('Delete this webhook?') && (await a.run(() => ok(api('DELETE /api/webhooks/{id}', { params: { id: w.id } }))))) void hooks.reload();
                      }}
                    >
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
        {open ? <History id={open} tick={historyTick} /> : null}
        <form
          className="form"
          onSubmit={async (e) => {
            e.preventDefault();
            const list = events.split(/[\s,]+/).filter(Boolean);
            const r: any = await a.run(() => api('POST /api/webhooks', { body: { url, kind, events: list } }));
            if (r) {
              setSecret(r.secret);
              setUrl('');
              void hooks.reload();
            }
          }}
        >
          <h3>Add a webhook</h3>
          <Field label="URL" error={fieldError(a.error, 'url')} hint="for telegram: the chat id">
            <input value={url} onChange={(e) => setUrl(e.target.value)} required />
          </Field>
          <Field label="Kind">
            <select value={kind} onChange={(e) => setKind(e.target.value as typeof kind)}>
              <option>custom</option>
              <option>slack</option>
              <option>discord</option>
              <option>telegram</option>
            </select>
          </Field>
          <Field label="Events" error={fieldError(a.error, 'events')} hint="* or names: request.failed provider.error">
            <input value={events} onChange={(e) => setEvents(e.target.value)} />
          </Field>
          <button type="submit" className="primary">
            Add webhook
          </button>
          {fieldError(a.error, 'url') || fieldError(a.error, 'events') ? null : <ErrorBox error={a.error} />}
        </form>
      </Section>
    </>
  );
}

/** The last delivery attempts of one webhook (kept by the daemon since it started). */
function History({ id, tick }: { id: string; tick: number }) {
  const h = useData(() => api('GET /api/webhooks/{id}/deliveries', { params: { id } }), [id, tick]);
  return (
    <section className="history" aria-label="Delivery history">
      <h3>Delivery history</h3>
      <ErrorBox error={h.error} />
      {h.data?.deliveries.length === 0 ? <Empty>No delivery since the daemon started. Press “Test” to send a test.ping.</Empty> : null}
      {h.data?.deliveries.length ? (
        <table>
          <thead>
            <tr>
              <th>Time</th>
              <th>Event</th>
              <th>Attempt</th>
              <th>Result</th>
            </tr>
          </thead>
          <tbody>
            {h.data.deliveries.map((d, i) => (
              <tr key={i} className={d.ok ? undefined : 'failed'}>
                <td>{fmt.time(d.at)}</td>
                <td>
                  {d.event}
                  {d.test ? ' (test)' : ''}
                </td>
                <td>{d.attempt}</td>
                <td>{d.ok ? `delivered (${d.status})` : `${d.status || 'no reply'}: ${d.error}`}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
