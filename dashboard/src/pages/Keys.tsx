import { useState } from 'react';
import { api } from '../api/client';
import type { ApiKeyRecord, CreatedApiKey } from '../api/replies';
import { CopyButton, Empty, ErrorBox, Field, fieldError, fmt, Section, useAction, useData, ok } from '../ui/kit';
import { checkLimits, fromDraft, KEY_FIELDS, keyFieldError, type LimitDraft, LimitsFields, limitsText, type TokenLimit, toDraft } from './KeyLimits';
import { KeyMemoryFields, useKeyMemory } from './KeyMemory';

type Key = ApiKeyRecord & { dailyRequestLimit?: number | null; tokenLimits?: TokenLimit[] };

const splitScopes = (s: string) =>
  s
    .split(/[\s,]+/)
    .map((x) => x.trim())
    .filter(Boolean);

/** API keys: create (the whole key shown once, with a copy button), rename, disable, scopes, limits, usage. */
export function Keys() {
  const keys = useData(() => api('GET /api/keys'));
  const usage = useData(() => api('GET /api/usage/breakdown', { query: { by: 'key', from: new Date(Date.now() - 30 * 86400_000).toISOString() } }));
  const [created, setCreated] = useState<CreatedApiKey>();
  const byKey = new Map((usage.data?.rows ?? []).map((r) => [r.key, r]));
  return (
    <>
      {created ? (
        <section className="card reveal" aria-label="New key">
          <h2>Key “{created.name}” created</h2>
          <p>Copy it now: this is the only time the whole key is shown.</p>
          <div className="row">
            <code className="secret" data-testid="new-key">
              {created.key}
            </code>
            <CopyButton text={created.key} />
            <button type="button" onClick={() => setCreated(undefined)}>
              Done
            </button>
          </div>
          <p className="muted small">
            Use it with any OpenAI SDK: base URL <code>{location.origin}/v1</code>, API key as above.
          </p>
        </section>
      ) : null}
      <Section title="API keys">
        <ErrorBox error={keys.error} />
        {keys.data?.keys.length === 0 ? <Empty>No API key yet. Create one below and give it to your SDK or tool.</Empty> : null}
        {keys.data?.keys.length ? (
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>Key</th>
                <th>Scopes</th>
                <th>Limits</th>
                <th>Requests (30 d)</th>
                <th>Cost (30 d)</th>
                <th>Last used</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {(keys.data.keys as Key[]).map((k) => (
                <KeyRow key={k.id} k={k} usage={byKey.get(k.id)} reload={keys.reload} />
              ))}
            </tbody>
          </table>
        ) : null}
      </Section>
      <CreateKey
        onCreated={(k) => {
          setCreated(k);
          void keys.reload();
        }}
      />
    </>
  );
}

function KeyRow({ k, usage, reload }: { k: Key; usage?: { requests: number; costUsd: number; unpricedRequests: number }; reload: () => void }) {
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState(k.name);
  const [scopes, setScopes] = useState(k.scopes.join(' '));
  const [limit, setLimit] = useState(k.dailyRequestLimit == null ? '' : String(k.dailyRequestLimit));
  const [drafts, setDrafts] = useState<LimitDraft[]>((k.tokenLimits ?? []).map(toDraft));
  const a = useAction();
  const memory = useKeyMemory(k.id, editing);
  const params = { id: k.id };
  // The form's own checks show once a save was tried (an empty new row is not an error yet).
  const [tried, setTried] = useState(false);
  const local = checkLimits(limit, drafts);
  const err = (f: string) => keyFieldError(tried ? local : {}, a.error, f);
  return (
    <>
      <tr className={k.isActive ? undefined : 'inactive'}>
        <td>{k.name}</td>
        <td>
          <code>{k.maskedKey}</code>
        </td>
        <td>{k.scopes.join(', ')}</td>
        <td className="small">{limitsText(k.dailyRequestLimit, k.tokenLimits)}</td>
        <td>{fmt.int(usage?.requests ?? 0)}</td>
        <td>{fmt.costTotal(usage?.costUsd ?? 0, usage?.unpricedRequests)}</td>
        <td>{fmt.time(k.lastUsedAt)}</td>
        <td className="actions">
          <button type="button" onClick={() => setEditing((v) => !v)} aria-expanded={editing}>
            Edit
          </button>
          <button
            type="button"
            onClick={async () => {
              if (await a.run(() => api('PATCH /api/keys/{id}', { params, body: { isActive: !k.isActive } }))) reload();
            }}
          >
            {k.isActive ? 'Disable' : 'Enable'}
          </button>
          <button
            type="button"
            className="danger"
            onClick={async () => {
              if (confirm(`Delete key ${k.name}?`) && (await a.run(() => ok(api('DELETE /api/keys/{id}', { params }))))) reload();
            }}
          >
            Delete
          </button>
        </td>
      </tr>
      {editing || a.error ? (
        <tr className="sub">
          <td colSpan={8}>
            {editing ? (
              <form
                className="inline"
                aria-label={`Edit key ${k.name}`}
                onSubmit={async (e) => {
                  e.preventDefault();
                  setTried(true);
                  if (Object.keys(local).length) return;
                  const body = { name, scopes: splitScopes(scopes), dailyRequestLimit: limit === '' ? null : Number(limit), tokenLimits: drafts.map(fromDraft) };
                  const saved = await a.run(async () => {
                    await api('PATCH /api/keys/{id}', { params, body });
                    await memory.save();
                    return true;
                  });
                  if (saved) {
                    setEditing(false);
                    setTried(false);
                    reload();
                  }
                }}
              >
                <Field label="Name" error={err('name')}>
                  <input value={name} onChange={(e) => setName(e.target.value)} />
                </Field>
                <Field label="Scopes" error={err('scopes')} hint="proxy, manage, model:<glob>, path:<prefix>">
                  <input value={scopes} onChange={(e) => setScopes(e.target.value)} />
                </Field>
                <LimitsFields daily={limit} setDaily={setLimit} drafts={drafts} setDrafts={setDrafts} err={err} />
                <KeyMemoryFields mem={memory} />
                <button type="submit" className="primary" disabled={a.busy}>
                  Save
                </button>
              </form>
            ) : null}
            {KEY_FIELDS.some((f) => fieldError(a.error, f)) ? null : <ErrorBox error={a.error} />}
          </td>
        </tr>
      ) : null}
    </>
  );
}

function CreateKey({ onCreated }: { onCreated: (k: CreatedApiKey) => void }) {
  const [name, setName] = useState('');
  const [proxy, setProxy] = useState(true);
  const [manage, setManage] = useState(false);
  const [extra, setExtra] = useState('');
  const [limit, setLimit] = useState('');
  const [drafts, setDrafts] = useState<LimitDraft[]>([]);
  const a = useAction();
  const [tried, setTried] = useState(false);
  const local = checkLimits(limit, drafts);
  const err = (f: string) => keyFieldError(tried ? local : {}, a.error, f);
  return (
    <Section title="Create a key">
      <form
        className="form"
        onSubmit={async (e) => {
          e.preventDefault();
          setTried(true);
          if (Object.keys(local).length) return;
          const scopes = [...(proxy ? ['proxy'] : []), ...(manage ? ['manage'] : []), ...splitScopes(extra)];
          const tokenLimits = drafts.map(fromDraft);
          const k = await a.run(() => api('POST /api/keys', { body: { name, scopes, dailyRequestLimit: limit === '' ? null : Number(limit), tokenLimits } }));
          if (k) {
            setName('');
            setDrafts([]);
            setTried(false);
            onCreated(k);
          }
        }}
      >
        <Field label="Key name" error={err('name')}>
          <input value={name} onChange={(e) => setName(e.target.value)} required />
        </Field>
        <fieldset>
          <legend>Scopes</legend>
          <label className="check">
            <input type="checkbox" checked={proxy} onChange={(e) => setProxy(e.target.checked)} /> proxy (call models)
          </label>
          <label className="check">
            <input type="checkbox" checked={manage} onChange={(e) => setManage(e.target.checked)} /> manage (the management API)
          </label>
          <Field label="More scopes" error={err('scopes')} hint="optional: model:gpt-* path:/v1/embeddings">
            <input value={extra} onChange={(e) => setExtra(e.target.value)} />
          </Field>
        </fieldset>
        <LimitsFields daily={limit} setDaily={setLimit} drafts={drafts} setDrafts={setDrafts} err={err} />
        <button type="submit" className="primary" disabled={a.busy}>
          Create key
        </button>
        {KEY_FIELDS.some((f) => fieldError(a.error, f)) ? null : <ErrorBox error={a.error} />}
      </form>
    </Section>
  );
}
