import { type ReactNode, useCallback, useEffect, useRef, useState } from 'react';
import { ApiError } from '../api/client';
import { navigate } from '../nav';

/** Loads data on mount (and when `deps` change); `reload` refetches. Errors keep the daemon's message. */
export function useData<T>(load: () => Promise<T>, deps: unknown[] = []) {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string>();
  const seq = useRef(0);
  const reload = useCallback(() => {
    const n = ++seq.current;
    return load().then(
      (d) => {
        if (n === seq.current) {
          setData(d);
          setError(undefined);
        }
      },
      (e: unknown) => {
        if (n === seq.current) setError(errorText(e));
      },
    );
  }, deps);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { data, error, reload, setData };
}

/** Resolves to true once `p` settles well (for replies without a body: a 204 reads as undefined). */
export async function ok(p: Promise<unknown>): Promise<true> {
  await p;
  return true;
}

export function errorText(e: unknown): string {
  if (e instanceof ApiError) return e.message;
  if (e instanceof Error) return e.message;
  return String(e);
}

/** Runs an action and keeps its error (the daemon's message) and busy state for the form showing it. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | Error>();
  const run = useCallback(async <T,>(fn: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      return await fn();
    } catch (e) {
      setError(e instanceof Error ? e : new Error(String(e)));
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: () => setError(undefined) };
}

export function ErrorBox({ error }: { error?: string | Error }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {typeof error === 'string' ? error : error.message}
    </p>
  );
}

/** An empty list that says what to do next. */
export function Empty({ children }: { children: ReactNode }) {
  return <div className="empty">{children}</div>;
}

export function Section({ title, actions, children }: { title: string; actions?: ReactNode; children: ReactNode }) {
  return (
    <section className="card" aria-label={title}>
      <header className="card-head">
        <h2>{title}</h2>
        {actions ? <div className="actions">{actions}</div> : null}
      </header>
      {children}
    </section>
  );
}

/** A link inside the app: a real href (open in a new tab works) that navigates without reloading. */
export function Link({ to, children, className }: { to: string; children: ReactNode; className?: string }) {
  return (
    <a
      href={to}
      className={className}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}

/** A labelled form field; an error for it (the daemon's 400 naming this field in `param`) shows beneath. */
export function Field({ label, error, hint, children }: { label: string; error?: string; hint?: string; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noLabelWithoutControl: the control is the child passed in
    <label className={error ? 'field invalid' : 'field'}>
      <span>{label}</span>
      {children}
      {hint && !error ? <small className="hint">{hint}</small> : null}
      {error ? (
        <small className="field-error" role="alert">
          {error}
        </small>
      ) : null}
    </label>
  );
}

/** The message of an ApiError when it names `field` (or a path under it) in `param`. */
export function fieldError(error: Error | undefined, field: string): string | undefined {
  if (!(error instanceof ApiError) || !error.param) return undefined;
  const p = error.param.replace(/^body\.?/, '');
  return p === field || p.startsWith(`${field}.`) || p.startsWith(`${field}[`) ? error.message : undefined;
}

/** Copy to clipboard, with a fallback selection when the Clipboard API is unavailable. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
          setDone(true);
          setTimeout(() => setDone(false), 1500);
        } catch {
          setDone(false);
        }
      }}
    >
      {done ? 'Copied' : label}
    </button>
  );
}

export const fmt = {
  int: (n: number | null | undefined) => (n == null ? '–' : Math.round(n).toLocaleString('en-US')),
  usd: (n: number | null | undefined) => (n == null ? '–' : `$${n < 0.01 && n > 0 ? n.toFixed(5) : n.toFixed(2)}`),
  /** A row's cost: `unpriced` when no price is known (null), never a made-up $0. */
  cost: (n: number | null | undefined) => (n === null ? 'unpriced' : fmt.usd(n)),
  /** How many requests a total leaves out for want of a price. */
  unpriced: (n: number | undefined) => (n ? `${n} request${n === 1 ? '' : 's'} unpriced` : undefined),
  /**
   * A total's cost with the requests it leaves out for want of a price: `$1.20 (3 requests unpriced)`, and
   * only `3 requests unpriced` when no priced request cost anything (never a bare $0 for unknown costs).
   */
  costTotal: (n: number | null | undefined, unpriced: number | undefined) =>
    unpriced ? (n ? `${fmt.usd(n)} (${fmt.unpriced(unpriced)})` : fmt.unpriced(unpriced)) : fmt.usd(n),
  ms: (n: number | null | undefined) => (n == null ? '–' : n >= 1000 ? `${(n / 1000).toFixed(2)} s` : `${Math.round(n)} ms`),
  time: (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '–'),
  pct: (n: number | null | undefined) => (n == null ? '–' : `${(n * 100).toFixed(1)}%`),
};

export function Stat({ label, value, sub }: { label: string; value: ReactNode; sub?: ReactNode }) {
  return (
    <div className="stat">
      <div className="stat-label">{label}</div>
      <div className="stat-value">{value}</div>
      {sub ? <div className="stat-sub">{sub}</div> : null}
    </div>
  );
}

/** A JSON view of any value (settings and replies without a dedicated view). */
export function JsonView({ value }: { value: unknown }) {
  return <pre className="json">{JSON.stringify(value, null, 2)}</pre>;
}
