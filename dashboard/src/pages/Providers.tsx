import { useState } from 'react';
import { api } from '../api/client';
import type { AccountView, DiscoverReply } from '../api/replies';
import type { Routes } from '../../../src/shared/api/contract';
import { Empty, ErrorBox, Field, fieldError, fmt, Section, useAction, useData, ok } from '../ui/kit';
import { OAuthLogins } from './OAuthLogins';

type Conn = Record<string, any>;

/** Connections (add, test, rotate key, sync models, remove), OAuth logins and token import, provider nodes and the catalog. */
export function Providers() {
  const catalog = useData(() => api('GET /api/providers/catalog'));
  const conns = useData(() => api('GET /api/providers'));
  const nodes = useData(() => api('GET /api/provider-nodes'));
  const limits = useData(() => api('GET /api/accounts'));
  const quota = new Map((limits.data?.accounts ?? []).map((a) => [a.id, a] as const));
  const providers = (catalog.data?.providers ?? []) as Array<Record<string, any>>;
  const connections = (conns.data?.connections ?? []) as Conn[];
  const choices = [...(nodes.data?.nodes ?? []).map((n) => ({ id: n.prefix, name: `${n.name} (node)` })), ...providers.map((p) => ({ id: String(p.id), name: String(p.name) }))];
  return (
    <>
      <Section title="Connections">
        <ErrorBox error={conns.error} />
        {connections.length === 0 ? (
          <Empty>No connection yet: add one below with the provider's API key (or add a provider node first for your own endpoint).</Empty>
        ) : (
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>Provider</th>
                <th>Key</th>
                <th>Priority</th>
                <th>Active</th>
                <th title="What the provider's rate-limit headers said last; the headroom account strategy prefers the account with the most left">Quota left</th>
                <th>Actions</th>
              </tr>
            </thead>
            <tbody>
              {connections.map((c) => (
                <ConnectionRow key={c.id} c={c} quota={quota.get(String(c.id))} reload={conns.reload} />
              ))}
            </tbody>
          </table>
        )}
        <AddConnection choices={choices} onAdded={conns.reload} />
      </Section>
      <OAuthLogins onConnected={conns.reload} />
      <ImportLogins onImported={conns.reload} />
      <Section title="Provider nodes">
        <p className="muted">Your own OpenAI- or Anthropic-compatible endpoints; their models are named &lt;prefix&gt;/&lt;model&gt;.</p>
        <ErrorBox error={nodes.error} />
        {nodes.data?.nodes.length === 0 ? <Empty>No provider node. Add one for a local server or a private gateway.</Empty> : null}
        {nodes.data?.nodes.length ? (
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>Prefix</th>
                <th>Type</th>
                <th>Base URL</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {nodes.data.nodes.map((n) => (
                <tr key={n.id}>
                  <td>{n.name}</td>
                  <td>
                    <code>{n.prefix}</code>
                  </td>
                  <td>{n.type}</td>
                  <td>{n.baseUrl}</td>
                  <td>
                    <RemoveButton label={`Remove node ${n.name}`} run={() => api('DELETE /api/provider-nodes/{id}', { params: { id: n.id } })} done={() => {
                        void nodes.reload();
                        void conns.reload();
                      }} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
        <AddNode onAdded={nodes.reload} />
      </Section>
      <Section title="Catalog">
        <ErrorBox error={catalog.error} />
        <table>
          <thead>
            <tr>
              <th>Id</th>
              <th>Name</th>
              <th>Kind</th>
              <th>Format</th>
              <th>Auth</th>
            </tr>
          </thead>
          <tbody>
            {providers.map((p) => (
              <tr key={p.id}>
                <td>
                  <code>{p.id}</code>
                </td>
                <td>{p.name}</td>
                <td>{p.kind}</td>
                <td>{p.format}</td>
                <td>{(p.authKinds ?? []).join(', ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </Section>
    </>
  );
}

function RemoveButton({ label, run, done }: { label: string; run: () => Promise<unknown>; done: () => void }) {
  const a = useAction();
  return (
    <>
      <button
        type="button"
        className="danger"
        aria-label={label}
        disabled={a.busy}
        onClick={async () => {
          if (!confirm(`${label}?`)) return;
          if (await a.run(() => ok(run()))) done();
        }}
      >
        Remove
      </button>
      <ErrorBox error={a.error} />
    </>
  );
}

type Account = AccountView;

/** An account's remaining quota in one cell: the tightest share left, each window, and a cooldown. */
function QuotaCell({ q }: { q?: Account }) {
  if (!q || (q.windows.length === 0 && !q.coolingUntil)) return <td className="muted">–</td>;
  const parts = q.windows.map((w) => (w.remaining !== null ? `${w.name} ${fmt.int(w.remaining)}${w.limit !== null ? `/${fmt.int(w.limit)}` : ''}` : w.used !== null ? `${w.name} ${Math.round(w.used * 100)}% used` : w.name));
  return (
    <td title={parts.join('\n')}>
      {q.headroom !== null ? `${Math.round(q.headroom * 100)} %` : '–'}
      {q.coolingUntil ? <span className="muted small"> cooling until {new Date(q.coolingUntil).toLocaleTimeString()}</span> : null}
      <div className="muted small">{parts.join(', ')}</div>
    </td>
  );
}

function ConnectionRow({ c, quota, reload }: { c: Conn; quota?: Account; reload: () => void }) {
  const a = useAction();
  const [note, setNote] = useState<string>();
  const [rotating, setRotating] = useState(false);
  const [key, setKey] = useState('');
  const params = { id: String(c.id) };
  return (
    <>
      <tr>
        <td>{c.name}</td>
        <td>{c.provider}</td>
        <td>
          <code>{c.apiKey ?? c.accessToken ?? '–'}</code>
        </td>
        <td>{c.priority}</td>
        <td>{c.isActive ? 'yes' : 'no'}</td>
        <QuotaCell q={quota} />
        <td className="actions">
          <button
            type="button"
            disabled={a.busy}
            onClick={async () => {
              const r: any = await a.run(() => api('POST /api/providers/{id}/test', { params }));
              if (r) setNote(r.ok === false ? `Test failed: ${r.error ?? 'no answer'}` : `OK${r.latencyMs ? ` in ${fmt.ms(r.latencyMs)}` : ''}${r.models ? `, ${r.models.length} models` : ''}`);
            }}
          >
            Test
          </button>
          <button
            type="button"
            disabled={a.busy}
            onClick={async () => {
              const r: any = await a.run(() => api('POST /api/providers/{id}/sync-models', { params }));
              if (r) setNote(`Synced ${r.models?.length ?? r.count ?? ''} models`);
            }}
          >
            Sync models
          </button>
          <button type="button" onClick={() => setRotating((v) => !v)} aria-expanded={rotating}>
            Rotate key
          </button>
          <button
            type="button"
            onClick={async () => {
              await a.run(() => api('PUT /api/providers/{id}', { params, body: { isActive: !c.isActive } }));
              reload();
            }}
          >
            {c.isActive ? 'Disable' : 'Enable'}
          </button>
          <RemoveButton label={`Remove connection ${c.name}`} run={() => api('DELETE /api/providers/{id}', { params })} done={reload} />
        </td>
      </tr>
      {note || a.error || rotating ? (
        <tr className="sub">
          <td colSpan={6}>
            {note ? <span role="status">{note}</span> : null}
            <ErrorBox error={a.error} />
            {rotating ? (
              <form
                className="inline"
                onSubmit={async (e) => {
                  e.preventDefault();
                  const ok = await a.run(() => api('PUT /api/providers/{id}', { params, body: { apiKey: key } }));
                  if (ok) {
                    setRotating(false);
                    setKey('');
                    setNote('Key replaced');
                    reload();
                  }
                }}
              >
                <Field label="New API key">
                  <input type="password" value={key} onChange={(e) => setKey(e.target.value)} required />
                </Field>
                <button type="submit" className="primary">
                  Save key
                </button>
              </form>
            ) : null}
          </td>
        </tr>
      ) : null}
    </>
  );
}

function AddConnection({ choices, onAdded }: { choices: Array<{ id: string; name: string }>; onAdded: () => void }) {
  const [body, setBody] = useState<Routes['POST /api/providers']['body']>({ provider: '', name: '', apiKey: '' });
  const a = useAction();
  return (
    <form
      className="form"
      aria-label="Add a connection"
      onSubmit={async (e) => {
        e.preventDefault();
        const clean = { ...body, name: body.name || undefined, apiKey: body.apiKey || undefined };
        if (await a.run(() => api('POST /api/providers', { body: clean }))) {
          setBody({ provider: body.provider, name: '', apiKey: '' });
          onAdded();
        }
      }}
    >
      <h3>Add a connection</h3>
      <Field label="Provider" error={fieldError(a.error, 'provider')}>
        <select value={body.provider} onChange={(e) => setBody({ ...body, provider: e.target.value })} required>
          <option value="">Choose…</option>
          {choices.map((c) => (
            <option key={c.id} value={c.id}>
              {c.name}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Name" error={fieldError(a.error, 'name')} hint="optional; shown in logs">
        <input value={body.name ?? ''} onChange={(e) => setBody({ ...body, name: e.target.value })} />
      </Field>
      <Field label="API key" error={fieldError(a.error, 'apiKey')}>
        <input type="password" value={body.apiKey ?? ''} onChange={(e) => setBody({ ...body, apiKey: e.target.value })} />
      </Field>
      <button type="submit" className="primary" disabled={a.busy}>
        Add connection
      </button>
      {!fieldError(a.error, 'provider') && !fieldError(a.error, 'name') && !fieldError(a.error, 'apiKey') ? <ErrorBox error={a.error} /> : null}
    </form>
  );
}

function AddNode({ onAdded }: { onAdded: () => void }) {
  const empty: Routes['POST /api/provider-nodes']['body'] = { name: '', prefix: '', type: 'openai-compatible', baseUrl: '' };
  const [body, setBody] = useState(empty);
  const a = useAction();
  const errs = ['name', 'prefix', 'type', 'baseUrl'].map((f) => fieldError(a.error, f));
  return (
    <form
      className="form"
      aria-label="Add a provider node"
      onSubmit={async (e) => {
        e.preventDefault();
        if (await a.run(() => api('POST /api/provider-nodes', { body }))) {
          setBody(empty);
          onAdded();
        }
      }}
    >
      <h3>Add a provider node</h3>
      <Field label="Node name" error={errs[0]}>
        <input value={body.name} onChange={(e) => setBody({ ...body, name: e.target.value })} required />
      </Field>
      <Field label="Prefix" error={errs[1]} hint="lower case, e.g. local">
        <input value={body.prefix} onChange={(e) => setBody({ ...body, prefix: e.target.value })} required />
      </Field>
      <Field label="Type" error={errs[2]}>
        <select value={body.type} onChange={(e) => setBody({ ...body, type: e.target.value as typeof body.type })}>
          <option value="openai-compatible">OpenAI-compatible</option>
          <option value="anthropic-compatible">Anthropic-compatible</option>
        </select>
      </Field>
      <Field label="Base URL" error={errs[3]} hint="with the version, e.g. http://127.0.0.1:8080/v1">
        <input value={body.baseUrl} onChange={(e) => setBody({ ...body, baseUrl: e.target.value })} required />
      </Field>
      <button type="submit" className="primary" disabled={a.busy}>
        Add node
      </button>
      {errs.every((x) => !x) ? <ErrorBox error={a.error} /> : null}
    </form>
  );
}

/**
 * Imports the logins of coding CLIs found on this machine (OS credential store, CLI credential files):
 * discover lists them with fingerprints, the user ticks some, import takes only those still unchanged.
 */
function ImportLogins({ onImported }: { onImported: () => void }) {
  const [found, setFound] = useState<DiscoverReply['accounts']>();
  const [picked, setPicked] = useState<Set<string>>(new Set());
  const [result, setResult] = useState<string>();
  const a = useAction();
  const id = (x: { service: string; account: string }) => `${x.service}:${x.account}`;
  return (
    <Section
      title="Import CLI logins"
      actions={
        <button
          type="button"
          disabled={a.busy}
          onClick={async () => {
            setResult(undefined);
            const r = await a.run(() => api('POST /api/providers/keychain/discover'));
            if (r) {
              setFound(r.accounts);
              setPicked(new Set());
            }
          }}
        >
          Look for logins on this machine
        </button>
      }
    >
      <p className="muted">Claude Code, Codex, Gemini CLI and other tools keep their logins here; import them as connections.</p>
      <ErrorBox error={a.error} />
      {found && found.length === 0 ? <Empty>No CLI login found on this machine.</Empty> : null}
      {found?.length ? (
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            const confirmedAccounts = found.filter((x) => picked.has(id(x))).map(({ service, account, fingerprint }) => ({ service, account, fingerprint }));
            const r = await a.run(() => api('POST /api/providers/keychain/import', { body: { confirmedAccounts } }));
            if (r) {
              setResult(`Imported ${r.imported.length}${r.skipped.length ? `, skipped ${r.skipped.map((s) => `${s.account} (${s.reason})`).join(', ')}` : ''}.`);
              onImported();
            }
          }}
        >
          {found.map((x) => (
            <label key={id(x)} className="check">
              <input
                type="checkbox"
                checked={picked.has(id(x))}
                disabled={!x.importable}
                onChange={(e) => {
                  const next = new Set(picked);
                  if (e.target.checked) next.add(id(x));
                  else next.delete(id(x));
                  setPicked(next);
                }}
              />
              {x.provider}: {x.account}{' '}
              <span className="muted small">
                ({x.service}
                {x.importable ? '' : ', not a provider of this router'})
              </span>
            </label>
          ))}
          <button type="submit" className="primary" disabled={picked.size === 0}>
            Import selected
          </button>
        </form>
      ) : null}
      {result ? <p role="status">{result}</p> : null}
    </Section>
  );
}
