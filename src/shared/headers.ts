/** Header names shared by the CLI and the daemon. */
export const HEADER = {
  /** Machine-derived token the CLI sends to management routes; accepted from loopback callers only. */
  cliToken: 'x-router-cli-token',
  /** Every daemon response carries the daemon's version. */
  version: 'x-router-version',
  serverTiming: 'server-timing',
  /** Opt-in session stickiness key for account selection. */
  session: 'x-router-session',
} as const;

/** Name of the dashboard session cookie (CONTRACT "Authentication"). */
export const SESSION_COOKIE = 'auth_token';
