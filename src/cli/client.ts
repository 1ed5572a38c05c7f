import { HEADER } from '../shared/headers.js';
import { VERSION } from '../shared/version.js';
import type { ErrorReply } from '../shared/wire.js';
import { CliError } from './io.js';
import type { Target } from './target.js';

let warnedVersion = false;

/**
 * The one typed client of the daemon's management API. It attaches the CLI token, turns `{error}` replies
 * into CliErrors a person can act on, turns a refused connection into "try `router start`", and warns once
 * when the daemon's version differs from the CLI's.
 */
export class DaemonClient {
  constructor(
    private readonly target: Target,
    private readonly warn: (text: string) => void = (t) => process.stderr.write(`${t}\n`),
  ) {}

  get url(): string {
    return this.target.url;
  }

  async request<T>(method: string, path: string, body?: unknown, timeoutMs = 15_000): Promise<T> {
    const headers: Record<string, string> = {};
    if (this.target.cliToken) headers[HEADER.cliToken] = this.target.cliToken;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(`${this.target.url}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw connectionError(err, this.target.url);
    }
    this.checkVersion(res.headers.get(HEADER.version));
    const text = await res.text();
    if (!res.ok) throw replyError(res.status, text);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  private checkVersion(daemonVersion: string | null): void {
    if (!daemonVersion || daemonVersion === VERSION || warnedVersion) return;
    warnedVersion = true;
    this.warn(`warning: the daemon runs router ${daemonVersion} but this CLI is ${VERSION}; run \`router restart\`.`);
  }
}

function connectionError(err: unknown, url: string): CliError {
  const code = (err as { cause?: { code?: string } }).cause?.code;
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH') {
    return new CliError(`the router daemon is not running at ${url}; try \`router start\`.`);
  }
  if ((err as Error).name === 'TimeoutError') return new CliError(`the router daemon at ${url} did not answer in time.`);
  return new CliError(`cannot reach the router daemon at ${url}: ${code ?? (err as Error).message}`);
}

function replyError(status: number, text: string): CliError {
  let message = text;
  try {
    message = (JSON.parse(text) as ErrorReply).error.message;
  } catch {
    // not the standard body; show the text as is
  }
  if (status === 401) return new CliError(`not authorized (401): ${message} Is this the same user and --home as the daemon?`);
  if (status === 403) return new CliError(`forbidden (403): ${message}`);
  return new CliError(`${message} (HTTP ${status})`);
}
