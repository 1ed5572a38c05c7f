import { useState } from 'react';
import { api } from '../api/client';
import { ErrorBox, useAction } from '../ui/kit';

interface Props {
  passwordSet: boolean;
  requireLogin: boolean;
  reason?: 'expired' | 'logged-out';
  theme: string;
  toggleTheme: () => void;
  onIn: () => void;
}

/** The login form; on first run (no password yet) it says how to set one. */
export function Login({ passwordSet, requireLogin, reason, theme, toggleTheme, onIn }: Props) {
  const [password, setPassword] = useState('');
  const action = useAction();
  return (
    <main className="login" id="main">
      <h1>router</h1>
      {reason === 'expired' ? <p className="notice">Your session has ended; log in again.</p> : null}
      {reason === 'logged-out' ? <p className="notice">You are logged out.</p> : null}
      {!requireLogin && reason === 'logged-out' ? (
        <p>
          This machine does not require a login.{' '}
          <button type="button" onClick={onIn}>
            Open the dashboard
          </button>
        </p>
      ) : null}
      {passwordSet ? (
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            const ok = await action.run(() => api('POST /api/auth/login', { body: { password } }));
            if (ok) onIn();
          }}
        >
          <label className="field">
            <span>Password</span>
            <input type="password" autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} required />
          </label>
          <button type="submit" className="primary" disabled={action.busy}>
            Log in
          </button>
          <ErrorBox error={action.error} />
        </form>
      ) : (
        <div className="first-run">
          <h2>Set a password first</h2>
          <p>No dashboard password is set yet. In a terminal on this machine run:</p>
          <pre>router password set</pre>
          <p>
            then reload this page and log in. (Or turn login off for this machine's own browser with{' '}
            <code>router settings set requireLogin false</code>.)
          </p>
          <button type="button" onClick={onIn}>
            I have set it
          </button>
        </div>
      )}
      <button type="button" className="link" onClick={toggleTheme}>
        {theme === 'dark' ? 'Light' : 'Dark'} theme
      </button>
    </main>
  );
}
