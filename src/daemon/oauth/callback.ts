import { createServer, type Server } from 'node:http';
import { RouterError } from '../http/errors.js';
import { sameSecret } from './pkce.js';

/** What the loopback listener received: a code for the login's state, or the provider's refusal. */
export type CallbackResult = { code: string } | { error: string };

const PAGE = (title: string, text: string) =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><body style="font-family:sans-serif;margin:3em"><h1>${title}</h1><p>${text}</p></body>`;

/**
 * A one-shot loopback listener for an OAuth redirect: bound to 127.0.0.1 on the port the provider
 * registered, it answers only `path` with the login's `state` (compared in constant time; anything else
 * is refused and the listener keeps waiting), hands the code to `onResult`, shows the outcome page, and
 * closes. Resolves once listening; a port in use is a 409.
 */
export async function startCallbackListener(opts: {
  port: number;
  path: string;
  state: string;
  onResult: (result: CallbackResult) => Promise<{ ok: boolean; message: string }>;
}): Promise<Server> {
  let used = false;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const page = (status: number, title: string, text: string) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', connection: 'close' });
      res.end(PAGE(title, text));
    };
    if (req.method !== 'GET' || url.pathname !== opts.path) return page(404, 'Not found', 'This address only takes the login redirect.');
    const state = url.searchParams.get('state') ?? '';
    if (used || !sameSecret(state, opts.state)) return page(400, 'Login refused', 'This login link is not the one router is waiting for (state mismatch or already used).');
    used = true;
    const code = url.searchParams.get('code');
    const error = url.searchParams.get('error');
    const result: CallbackResult = code ? { code } : { error: url.searchParams.get('error_description') ?? error ?? 'the provider sent no code' };
    void opts.onResult(result).then(
      (outcome) => {
        page(outcome.ok ? 200 : 400, outcome.ok ? 'Logged in' : 'Login failed', `${escapeHtml(outcome.message)} You can close this tab.`);
        closeListener(server);
      },
      () => {
        page(500, 'Login failed', 'router could not finish the login.');
        closeListener(server);
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new RouterError(409, `Port ${opts.port} is in use; the login's redirect needs it (close the program using it, e.g. the provider's own CLI login).`, { code: 'port_in_use' })
          : err,
      ),
    );
    server.listen(opts.port, '127.0.0.1', resolve);
  });
  return server;
}

/** Stops accepting and drops idle sockets (the page just sent finishes first). */
export function closeListener(server: Server): void {
  server.close();
  server.closeIdleConnections();
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
