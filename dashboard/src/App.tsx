import { type ReactNode, useEffect, useRef, useState } from 'react';
import { api, setUnauthorizedHandler } from './api/client';
import { closeLive, useLive } from './api/live';
import { navigate, PAGES, type PageId, useLocation } from './nav';
import { useTheme } from './theme';
import { Link } from './ui/kit';
import { Login } from './pages/Login';
import { Home } from './pages/Home';
import { Providers } from './pages/Providers';
import { Combos } from './pages/Combos';
import { Keys } from './pages/Keys';
import { Usage } from './pages/Usage';
import { Requests } from './pages/Requests';
import { Playground } from './pages/Playground';
import { Memory, Guardrails, Compression, Cache } from './pages/Config';
import { Settings } from './pages/Settings';
import { Webhooks } from './pages/Webhooks';
import { Pricing } from './pages/Pricing';
import { Resilience } from './pages/Resilience';
import { Cluster } from './pages/Cluster';
import { Insights } from './pages/Insights';

type AuthState =
  | { kind: 'checking' }
  | { kind: 'login'; passwordSet: boolean; requireLogin: boolean; reason?: 'expired' | 'logged-out' }
  | { kind: 'in'; open: boolean }
  | { kind: 'down'; message: string };

const VIEWS: Record<PageId, (p: { rest: string; search: URLSearchParams }) => ReactNode> = {
  home: () => <Home />,
  providers: () => <Providers />,
  combos: () => <Combos />,
  keys: () => <Keys />,
  usage: () => <Usage />,
  requests: ({ rest, search }) => <Requests traceId={rest} search={search} />,
  playground: () => <Playground />,
  memory: () => <Memory />,
  guardrails: () => <Guardrails />,
  compression: () => <Compression />,
  cache: () => <Cache />,
  webhooks: () => <Webhooks />,
  pricing: () => <Pricing />,
  resilience: () => <Resilience />,
  cluster: () => <Cluster />,
  insights: () => <Insights />,
  settings: () => <Settings />,
};

/**
 * Decides between the login page and the app: a management call that succeeds means the browser may in
 * (a session, or loopback with requireLogin off, where a password-less session is opened so the client
 * routes work too); a 401 shows the login page, later ones (expiry) bring it back with a word why.
 */
export function App() {
  const [auth, setAuth] = useState<AuthState>({ kind: 'checking' });
  const [theme, toggleTheme] = useTheme();

  const check = async (reason?: 'expired' | 'logged-out') => {
    try {
      const status = await api('GET /api/auth/status');
      if (reason === 'logged-out') return setAuth({ kind: 'login', ...status, reason });
      try {
        await api('GET /api/system/status');
        if (!status.requireLogin) await api('POST /api/auth/session').catch(() => undefined);
        setAuth({ kind: 'in', open: !status.requireLogin });
      } catch {
        setAuth({ kind: 'login', ...status, reason });
      }
    } catch (e) {
      setAuth({ kind: 'down', message: e instanceof Error ? e.message : String(e) });
    }
  };

  useEffect(() => {
    void check();
    setUnauthorizedHandler(() => {
      closeLive();
      setAuth((a) => (a.kind === 'in' ? { kind: 'login', passwordSet: true, requireLogin: true, reason: 'expired' } : a));
    });
  }, []);

  if (auth.kind === 'checking') return <p className="center">Loading…</p>;
  if (auth.kind === 'down') return <p className="center error">The daemon did not answer: {auth.message}</p>;
  if (auth.kind === 'login') {
    return <Login {...auth} theme={theme} toggleTheme={toggleTheme} onIn={() => check()} />;
  }
  return (
    <Shell
      open={auth.open}
      theme={theme}
      toggleTheme={toggleTheme}
      onLogout={async () => {
        await api('POST /api/auth/logout').catch(() => undefined);
        closeLive();
        await check('logged-out');
      }}
    />
  );
}

function Shell({ open, theme, toggleTheme, onLogout }: { open: boolean; theme: string; toggleTheme: () => void; onLogout: () => void }) {
  const { page, rest, search } = useLocation();
  const { connected } = useLive({});
  const [menu, setMenu] = useState(false);
  const title = PAGES.find(([id]) => id === page)?.[1] ?? 'Home';
  const first = useRef(true);
  useEffect(() => {
    document.title = `${title} · router`;
    setMenu(false);
    // After an in-app navigation the focus moves to the new page's content (as a page load would put it
    // at the start); on the first load it stays at the top, where Tab reaches the skip link first.
    if (first.current) first.current = false;
    else document.getElementById('main')?.focus({ preventScroll: true });
  }, [page, rest]);
  useEffect(() => {
    // Keyboard: g then a page's first letter... kept simple: Alt+1..9 and Alt+0 jump to the first ten pages.
    const onKey = (e: KeyboardEvent) => {
      if (!e.altKey || e.ctrlKey || e.metaKey) return;
      const n = '1234567890'.indexOf(e.key);
      if (n >= 0 && PAGES[n]) {
        e.preventDefault();
        navigate(`/dashboard/${PAGES[n][0]}`);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <button type="button" className="menu-toggle" aria-expanded={menu} aria-controls="nav" onClick={() => setMenu((m) => !m)}>
          Menu
        </button>
        <strong className="brand">router</strong>
        <span className={connected ? 'live on' : 'live'} title="The live channel (/api/live)">
          {connected ? 'live' : 'offline'}
        </span>
        <span className="spacer" />
        <button type="button" onClick={toggleTheme} aria-label={`Switch to ${theme === 'dark' ? 'light' : 'dark'} theme`}>
          {theme === 'dark' ? 'Light' : 'Dark'} theme
        </button>
        {open ? (
          <span className="muted small">no login needed on this machine</span>
        ) : (
          <button type="button" onClick={onLogout}>
            Log out
          </button>
        )}
      </header>
      <nav id="nav" className={menu ? 'nav open' : 'nav'} aria-label="Pages">
        <ul>
          {PAGES.map(([id, label]) => (
            <li key={id}>
              <Link to={`/dashboard/${id}`} className={id === page ? 'current' : undefined}>
                <span aria-current={id === page ? 'page' : undefined}>{label}</span>
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        <h1>{title}</h1>
        {VIEWS[page]({ rest, search })}
      </main>
    </div>
  );
}
