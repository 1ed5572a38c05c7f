import { useState } from 'react';
import { api } from '../api/client';
import { Empty, ErrorBox, Field, fieldError, fmt, JsonView, Section, Stat, useAction, useData, ok } from '../ui/kit';

/** Memories: the list, adding one, deleting, and the engine's state. */
export function Memory() {
  const list = useData(() => api('GET /api/memory'));
  const engine = useData(() => api('GET /api/memory/engine-status'));
  const [key, setKey] = useState('');
  const [content, setContent] = useState('');
  const a = useAction();
  return (
    <>
      <Section title="Memories">
        <ErrorBox error={list.error} />
        {list.data?.data.length === 0 ? <Empty>No memory stored. Add a fact below; requests of keys with memory on get the relevant ones injected.</Empty> : null}
        {list.data?.data.length ? (
          <table>
            <thead>
              <tr>
                <th>Type</th>
                <th>Key</th>
                <th>Content</th>
                <th>Hits</th>
                <th>Created</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((m) => (
                <tr key={m.id}>
                  <td>{m.type}</td>
                  <td>{m.key}</td>
                  <td>{m.content}</td>
                  <td>{m.hitCount}</td>
                  <td>{fmt.time(m.createdAt)}</td>
                  <td>
                    <button
                      type="button"
                      aria-label={`Delete memory ${m.key}`}
                      onClick={async () => {
                        if (await a.run(() => ok(api('DELETE /api/memory/{id}', { params: { id: m.id } })))) void list.reload();
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
        <form
          className="form"
          onSubmit={async (e) => {
            e.preventDefault();
            if (await a.run(() => api('POST /api/memory', { body: { key, content, type: 'factual' } }))) {
              setKey('');
              setContent('');
              void list.reload();
            }
          }}
        >
          <h3>Add a memory</h3>
          <Field label="Key" error={fieldError(a.error, 'key')}>
            <input value={key} onChange={(e) => setKey(e.target.value)} required />
          </Field>
          <Field label="Content" error={fieldError(a.error, 'content')}>
            <textarea rows={2} value={content} onChange={(e) => setContent(e.target.value)} required />
          </Field>
          <button type="submit" className="primary">
            Add memory
          </button>
          <ErrorBox error={fieldError(a.error, 'key') || fieldError(a.error, 'content') ? undefined : a.error} />
        </form>
      </Section>
      <Section title="Engine">
        <ErrorBox error={engine.error} />
        {engine.data ? <JsonView value={engine.data} /> : null}
      </Section>
    </>
  );
}

const MODES = ['off', 'log', 'redact', 'block'] as const;

/** Guardrails: each one's mode, and a text run through them. */
export function Guardrails() {
  const g = useData(() => api('GET /api/guardrails'));
  const a = useAction();
  const [text, setText] = useState('');
  const [result, setResult] = useState<unknown>();
  const test = useAction();
  return (
    <>
      <Section title="Guardrails">
        <ErrorBox error={g.error ?? a.error} />
        <table>
          <thead>
            <tr>
              <th>Guardrail</th>
              <th>What it does</th>
              <th>Mode</th>
            </tr>
          </thead>
          <tbody>
            {((g.data?.guardrails ?? []) as Array<{ name: string; description: string; mode: string }>).map((r) => (
              <tr key={r.name}>
                <td>{r.name}</td>
                <td className="small">{r.description}</td>
                <td>
                  <select
                    aria-label={`Mode of ${r.name}`}
                    value={r.mode}
                    onChange={async (e) => {
                      if (await a.run(() => api('PATCH /api/guardrails', { body: { [r.name]: { mode: e.target.value } } as never }))) void g.reload();
                    }}
                  >
                    {MODES.filter((m) => r.name !== 'maxInputSize' || m !== 'redact').map((m) => (
                      <option key={m}>{m}</option>
                    ))}
                  </select>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
      <Section title="Try a text">
        <form
          className="form"
          onSubmit={async (e) => {
            e.preventDefault();
            setResult(await test.run(() => api('POST /api/guardrails/test', { body: { text } })));
          }}
        >
          <Field label="Text">
            <textarea rows={3} value={text} onChange={(e) => setText(e.target.value)} required />
          </Field>
          <button type="submit">Run the guardrails</button>
          <ErrorBox error={test.error} />
        </form>
        {result ? <JsonView value={result} /> : null}
      </Section>
    </>
  );
}

/** Context compression settings. */
export function Compression() {
  const c = useData(() => api('GET /api/settings/compression'));
  return (
    <Section title="Context compression">
      <ErrorBox error={c.error} />
      {c.data ? <ObjectForm value={c.data} save={(v) => api('PUT /api/settings/compression', { body: v as never })} onSaved={c.reload} /> : null}
    </Section>
  );
}

/** The response cache: counters, settings, purge. */
export function Cache() {
  const c = useData(() => api('GET /api/cache'));
  const a = useAction();
  const d = c.data as Record<string, any> | undefined;
  return (
    <>
      <ErrorBox error={c.error} />
      <div className="stats">
        <Stat label="Hit rate" value={fmt.pct(d?.hitRate)} sub={d ? `${fmt.int(d.hits)} hits, ${fmt.int(d.misses)} misses` : undefined} />
        <Stat label="Entries" value={fmt.int(d?.entries)} sub={d ? `${(d.bytes / 1024).toFixed(1)} KB` : undefined} />
        <Stat label="Tokens saved" value={fmt.int(d?.savedTokens)} />
      </div>
      <Section
        title="Cache settings"
        actions={
          <button
            type="button"
            className="danger"
            onClick={async () => {
              if (confirm('Purge every cached reply?') && (await a.run(() => ok(api('DELETE /api/cache'))))) void c.reload();
            }}
          >
            Purge cache
          </button>
        }
      >
        <ErrorBox error={a.error} />
        {d ? (
          <ObjectForm
            value={{ enabled: d.enabled, ttlSeconds: d.ttlSeconds, maxEntries: d.maxEntries, maxBytes: d.maxBytes }}
            save={(v) => api('PATCH /api/cache', { body: v as never })}
            onSaved={c.reload}
          />
        ) : null}
      </Section>
    </>
  );
}

/** A form for a flat object of settings; objects and arrays are edited as JSON. The daemon validates. */
function ObjectForm({ value, save, onSaved, onlyChanged }: { value: Record<string, unknown>; save: (v: Record<string, unknown>) => Promise<unknown>; onSaved: () => void; onlyChanged?: boolean }) {
  const [draft, setDraft] = useState<Record<string, string | boolean>>(() =>
    Object.fromEntries(Object.entries(value).map(([k, v]) => [k, typeof v === 'boolean' ? v : typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v ?? '')])),
  );
  const [saved, setSaved] = useState(false);
  const a = useAction();
  const parse = (k: string, v: string | boolean): unknown => {
    const orig = value[k];
    if (typeof orig === 'boolean') return v;
    if (typeof orig === 'number') return v === '' ? null : Number(v);
    if (typeof orig === 'object' && orig !== null) return JSON.parse(String(v));
    return v;
  };
  return (
    <form
      className="form settings"
      onSubmit={async (e) => {
        e.preventDefault();
        setSaved(false);
        const out: Record<string, unknown> = {};
        const ok = await a.run(async () => {
          for (const [k, v] of Object.entries(draft)) {
            const parsed = parse(k, v);
            if (!onlyChanged || JSON.stringify(parsed) !== JSON.stringify(value[k])) out[k] = parsed;
          }
          await save(out);
          return true;
        });
        if (ok) {
          setSaved(true);
          onSaved();
        }
      }}
    >
      {Object.entries(draft).map(([k, v]) =>
        typeof v === 'boolean' ? (
          <label key={k} className="check">
            <input type="checkbox" checked={v} onChange={(e) => setDraft({ ...draft, [k]: e.target.checked })} /> {k}
            {fieldError(a.error, k) ? <small className="field-error">{fieldError(a.error, k)}</small> : null}
          </label>
        ) : (
          <Field key={k} label={k} error={fieldError(a.error, k)}>
            <input value={v} onChange={(e) => setDraft({ ...draft, [k]: e.target.value })} />
          </Field>
        ),
      )}
      <button type="submit" className="primary" disabled={a.busy}>
        Save
      </button>
      {saved && !a.error ? <span role="status">Saved.</span> : null}
      {Object.keys(draft).some((k) => fieldError(a.error, k)) ? null : <ErrorBox error={a.error} />}
    </form>
  );
}
