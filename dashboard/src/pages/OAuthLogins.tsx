import { useEffect, useRef, useState } from 'react';
import { api } from '../api/client';
import type { OAuthDeviceCodeReply, OAuthPollReply, OAuthProviderInfo } from '../api/replies';
import type { Routes } from '../../../src/shared/api/contract';
import { CopyButton, Empty, ErrorBox, Field, fieldError, Section, errorText, useAction, useData } from '../ui/kit';

type Phase = { kind: 'idle' } | { kind: 'waiting'; note: string } | { kind: 'done'; note: string } | { kind: 'failed'; note: string } | { kind: 'cancelled' };

/** Why a poll ended a login, in words (`complete` is handled by the caller). */
function endNote(r: OAuthPollReply): string {
  if (r.error) return r.error;
  if (r.status === 'expired') return 'The login expired before it was completed; start it again.';
  if (r.status === 'denied') return 'The login was refused at the provider.';
  return 'The login failed.';
}

/**
 * Polls `poll` until it answers something else than pending/slow_down, waiting `delayMs()` between calls;
 * returns the function that stops it (cancel, or the component going away).
 */
function pollUntilDone(poll: () => Promise<OAuthPollReply>, delayMs: () => number, onReply: (r: OAuthPollReply) => void, onError: (e: unknown) => void): () => void {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const tick = async () => {
    try {
      const r = await poll();
      if (stopped) return;
      onReply(r);
      if (r.status === 'pending' || r.status === 'slow_down') timer = setTimeout(tick, delayMs());
    } catch (e) {
      if (!stopped) onError(e);
    }
  };
  timer = setTimeout(tick, delayMs());
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/** The state line of a login, with Cancel while it waits. */
function PhaseLine({ phase, cancel }: { phase: Phase; cancel: () => void }) {
  if (phase.kind === 'idle') return null;
  if (phase.kind === 'failed') return <ErrorBox error={phase.note} />;
  return (
    <div className="row">
      <p role="status" className={phase.kind === 'waiting' ? 'waiting' : undefined}>
        {phase.kind === 'cancelled' ? 'Cancelled: router no longer waits for this login.' : phase.note}
      </p>
      {phase.kind === 'waiting' ? (
        <button type="button" onClick={cancel}>
          Cancel
        </button>
      ) : null}
    </div>
  );
}

/**
 * Stops waiting and abandons the login at the daemon (`POST cancel`: it forgets the state and closes the
 * callback listener), so a late redirect or code entry no longer adds a connection.
 */
async function cancelLogin(provider: string, state: string | undefined, stop: (() => void) | undefined, setPhase: (p: Phase) => void): Promise<void> {
  stop?.();
  try {
    if (state) await api('POST /api/oauth/{provider}/cancel', { params: { provider }, body: { state } });
    setPhase({ kind: 'cancelled' });
  } catch (e) {
    setPhase({ kind: 'failed', note: errorText(e) });
  }
}

/** Keeps the function that stops the current poll, and calls it when the component goes away. */
function useStopper() {
  const stop = useRef<() => void>(undefined);
  useEffect(() => () => stop.current?.(), []);
  return stop;
}

/**
 * Browser login through router's loopback listener: start-callback-server, the provider's page in a new
 * window, then poll-callback every second until the login completes, fails or expires.
 */
function BrowserLogin({ p, onConnected }: { p: OAuthProviderInfo; onConnected: () => void }) {
  const [port, setPort] = useState('');
  const [phase, setPhase] = useState<Phase>({ kind: 'idle' });
  const [authUrl, setAuthUrl] = useState<string>();
  const login = useRef<string>(undefined);
  const stop = useStopper();
  const a = useAction();
  const params = { provider: p.id };
  const portError = port && !/^\d+$/.test(port) ? 'A port number from 1024 to 65535.' : fieldError(a.error, 'port');
  return (
    <form
      className="form"
      aria-label={`Log in with ${p.id}`}
      onSubmit={async (e) => {
        e.preventDefault();
        if (portError && !fieldError(a.error, 'port')) return;
        stop.current?.();
        setPhase({ kind: 'idle' });
        const r = await a.run(() => api('GET /api/oauth/{provider}/start-callback-server', { params, query: { port: port ? Number(port) : undefined } }));
        if (!r) return;
        login.current = r.state;
        setAuthUrl(r.authUrl);
        // The provider's page in its own window, cut off from this one (noopener): router hears the redirect itself.
        window.open(r.authUrl, '_blank', 'noopener');
        setPhase({ kind: 'waiting', note: `Waiting for the login in the ${p.name} window…` });
        stop.current = pollUntilDone(
          () => api('POST /api/oauth/{provider}/poll-callback', { params, body: { state: r.state } }),
          () => 1000,
          (reply) => {
            if (reply.status === 'complete') {
              setPhase({ kind: 'done', note: `Logged in: connection “${reply.connection?.name ?? p.name}” added.` });
              onConnected();
            } else if (reply.status !== 'pending') setPhase({ kind: 'failed', note: endNote(reply) });
          },
          (err) => setPhase({ kind: 'failed', note: errorText(err) }),
        );
      }}
    >
      <h3>Log in to {p.name}</h3>
      <p className="muted small">
        Opens {p.name}'s login page in a new window; when you agree there, the provider sends your browser back to router on this machine, which
        finishes the login.
      </p>
      <Field label="Callback port" error={portError} hint="optional: the provider's registered port by default">
        <input inputMode="numeric" value={port} onChange={(e) => setPort(e.target.value.trim())} size={6} />
      </Field>
      <button type="submit" className="primary" disabled={a.busy || phase.kind === 'waiting'}>
        Open the login page
      </button>
      {fieldError(a.error, 'port') ? null : <ErrorBox error={a.error} />}
      {phase.kind === 'waiting' && authUrl ? (
        <p className="small">
          No window? <a href={authUrl} target="_blank" rel="noopener noreferrer">Open the login page</a> yourself.
        </p>
      ) : null}
      <PhaseLine phase={phase} cancel={() => cancelLogin(p.id, login.current, stop.current, setPhase)} />
    </form>
  );
}

/**
 * Device login (RFC 8628): shows the code and where to enter it, polls at the provider's interval (longer
 * after slow_down) until the login completes, is refused, or the code expires.
 */
function DeviceLogin({ p, onConnected }: { p: OAuthProviderInfo; onConnected: () => void }) {
  const [code, setCode] = useState<OAuthDeviceCodeReply>();
  const [phase, setPhase] = useState<Phase>({ kind: 'idle' });
  const login = useRef<string>(undefined);
  const stop = useStopper();
  const a = useAction();
  const params = { provider: p.id };
  const start = async () => {
    stop.current?.();
    setPhase({ kind: 'idle' });
    const dc = await a.run(() => api('GET /api/oauth/{provider}/device-code', { params }));
    if (!dc) return;
    login.current = dc.state;
    setCode(dc);
    let interval = Math.max(1, dc.interval);
    const expires = Date.now() + dc.expires_in * 1000;
    const waiting = `Waiting for the code to be entered (checking every ${interval} s; it expires at ${new Date(expires).toLocaleTimeString()})…`;
    setPhase({ kind: 'waiting', note: waiting });
    stop.current = pollUntilDone(
      () => {
        if (Date.now() > expires) return Promise.resolve({ status: 'expired' } as OAuthPollReply);
        return api('POST /api/oauth/{provider}/poll', { params, body: { state: dc.state } });
      },
      () => interval * 1000,
      (reply) => {
        if (reply.status === 'complete') {
          setPhase({ kind: 'done', note: `Logged in: connection “${reply.connection?.name ?? p.name}” added.` });
          onConnected();
        } else if (reply.status === 'slow_down') {
          interval = reply.interval ?? interval + 5;
          setPhase({ kind: 'waiting', note: `${p.name} asked to be checked less often: now every ${interval} s…` });
        } else if (reply.status === 'pending') {
          if (reply.interval) interval = reply.interval;
        } else setPhase({ kind: 'failed', note: endNote(reply) });
      },
      (err) => setPhase({ kind: 'failed', note: errorText(err) }),
    );
  };
  const uri = code?.verification_uri_complete ?? code?.verification_uri;
  return (
    <section className="form" aria-label={`Log in with ${p.id}`}>
      <h3>Log in to {p.name}</h3>
      <p className="muted small">{p.name} logs in with a code you enter on its site, from any browser.</p>
      <button type="button" className="primary" disabled={a.busy || phase.kind === 'waiting'} onClick={start}>
        Get a login code
      </button>
      <ErrorBox error={a.error} />
      {code && phase.kind === 'waiting' ? (
        <div className="device-code">
          <p>
            Go to{' '}
            <a href={uri} target="_blank" rel="noopener noreferrer">
              {code.verification_uri}
            </a>{' '}
            and enter:
          </p>
          <div className="row">
            <code className="secret" data-testid="user-code">
              {code.user_code}
            </code>
            <CopyButton text={code.user_code} />
          </div>
        </div>
      ) : null}
      <PhaseLine phase={phase} cancel={() => cancelLogin(p.id, login.current, stop.current, setPhase)} />
    </section>
  );
}

type ImportBody = Routes['POST /api/oauth/{provider}/import-token']['body'];
const IMPORT_FIELDS = ['accessToken', 'refreshToken', 'expiresAt', 'name', 'email', 'accountId', 'projectId', 'baseUrl'] as const;

/** Tokens from another login (another machine, a CLI's file) as a connection (`import-token`). */
function ImportToken({ p, onConnected }: { p: OAuthProviderInfo; onConnected: () => void }) {
  const [f, setF] = useState<Record<(typeof IMPORT_FIELDS)[number], string>>({ accessToken: '', refreshToken: '', expiresAt: '', name: '', email: '', accountId: '', projectId: '', baseUrl: '' });
  const [note, setNote] = useState<string>();
  const a = useAction();
  const set = (k: keyof typeof f) => (e: { target: { value: string } }) => setF({ ...f, [k]: e.target.value });
  const err = (k: string) => fieldError(a.error, k);
  return (
    <form
      className="form"
      aria-label={`Import a ${p.id} token`}
      onSubmit={async (e) => {
        e.preventDefault();
        setNote(undefined);
        const body: ImportBody = { accessToken: f.accessToken.trim() };
        for (const k of ['refreshToken', 'name', 'email', 'accountId', 'projectId', 'baseUrl'] as const) if (f[k].trim()) body[k] = f[k].trim();
        // datetime-local is the browser's local time; the daemon takes an ISO date-time with its offset.
        if (f.expiresAt) body.expiresAt = Number.isNaN(Date.parse(f.expiresAt)) ? f.expiresAt : new Date(f.expiresAt).toISOString();
        const r = await a.run(() => api('POST /api/oauth/{provider}/import-token', { params: { provider: p.id }, body }));
        if (r) {
          setNote(`${r.created ? 'Imported' : 'Updated'}: connection “${r.connection.name}”.`);
          setF({ ...f, accessToken: '', refreshToken: '' });
          onConnected();
        }
      }}
    >
      <h3>Import a {p.name} token</h3>
      <Field label="Access token" error={err('accessToken')} hint={p.id === 'github-copilot' ? 'the GitHub token' : undefined}>
        <input type="password" value={f.accessToken} onChange={set('accessToken')} required autoComplete="off" />
      </Field>
      <Field label="Refresh token" error={err('refreshToken')} hint="optional">
        <input type="password" value={f.refreshToken} onChange={set('refreshToken')} autoComplete="off" />
      </Field>
      <Field label="Expires at" error={err('expiresAt')} hint="optional">
        <input type="datetime-local" value={f.expiresAt} onChange={set('expiresAt')} />
      </Field>
      <Field label="Connection name" error={err('name')} hint="optional">
        <input value={f.name} onChange={set('name')} />
      </Field>
      <Field label="E-mail" error={err('email')} hint="optional: the account's">
        <input value={f.email} onChange={set('email')} />
      </Field>
      {p.id === 'codex' ? (
        <Field label="Account id" error={err('accountId')} hint="optional: read from the id token when absent">
          <input value={f.accountId} onChange={set('accountId')} />
        </Field>
      ) : null}
      {p.id === 'gemini-cli' || p.id === 'antigravity' ? (
        <Field label="Project id" error={err('projectId')} hint="optional: looked up on first use">
          <input value={f.projectId} onChange={set('projectId')} />
        </Field>
      ) : null}
      <Field label="Base URL" error={err('baseUrl')} hint={p.retired ? 'the OpenAI-compatible endpoint the token is for' : 'optional: the API base, when not the provider\'s own'}>
        <input value={f.baseUrl} onChange={set('baseUrl')} required={p.retired} />
      </Field>
      <button type="submit" className="primary" disabled={a.busy}>
        Import token
      </button>
      {IMPORT_FIELDS.some((k) => err(k)) ? null : <ErrorBox error={a.error} />}
      {note ? <p role="status">{note}</p> : null}
    </form>
  );
}

/**
 * Subscription accounts: each OAuth provider with the login it offers (browser through router's callback
 * listener, or a device code) and token import; providers that retired their browser login import only.
 */
export function OAuthLogins({ onConnected }: { onConnected: () => void }) {
  const list = useData(() => api('GET /api/oauth/providers'));
  const [open, setOpen] = useState<{ id: string; mode: 'login' | 'import' }>();
  const providers = list.data?.providers ?? [];
  const p = providers.find((x) => x.id === open?.id);
  const toggle = (id: string, mode: 'login' | 'import') => setOpen(open?.id === id && open.mode === mode ? undefined : { id, mode });
  return (
    <Section title="Subscription accounts">
      <p className="muted">
        Log in with a coding tool's subscription, or import its tokens. Use your own accounts within each subscription's terms (docs/accounts.md).
      </p>
      <ErrorBox error={list.error} />
      {list.data && providers.length === 0 ? <Empty>No provider with an OAuth login in this router.</Empty> : null}
      {providers.length ? (
        <table>
          <thead>
            <tr>
              <th>Provider</th>
              <th>Login</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {providers.map((x) => (
              <tr key={x.id}>
                <td>
                  {x.name} <code className="small">{x.id}</code>
                </td>
                <td>{x.login === 'browser' ? 'browser' : x.login === 'device' ? 'device code' : 'token import only (browser login retired)'}</td>
                <td className="actions">
                  {x.login ? (
                    <button type="button" aria-label={`Log in with ${x.id}`} aria-expanded={open?.id === x.id && open.mode === 'login'} onClick={() => toggle(x.id, 'login')}>
                      Log in
                    </button>
                  ) : null}
                  <button type="button" aria-label={`Import a ${x.id} token`} aria-expanded={open?.id === x.id && open.mode === 'import'} onClick={() => toggle(x.id, 'import')}>
                    Import token
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {p && open?.mode === 'login' && p.login === 'browser' ? <BrowserLogin key={p.id} p={p} onConnected={onConnected} /> : null}
      {p && open?.mode === 'login' && p.login === 'device' ? <DeviceLogin key={p.id} p={p} onConnected={onConnected} /> : null}
      {p && open?.mode === 'import' ? <ImportToken key={p.id} p={p} onConnected={onConnected} /> : null}
    </Section>
  );
}
