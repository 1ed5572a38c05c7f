/** Header names shared by the CLI and the daemon. */
export const HEADER = {
  /** Machine-derived token the CLI sends to management routes; accepted from loopback callers only. */
  cliToken: 'x-router-cli-token',
  /** Every daemon response carries the daemon's version. */
  version: 'x-router-version',
  serverTiming: 'server-timing',
  /** Every daemon response carries one: the id of its request-log row and traffic capture, when it has them. */
  traceId: 'x-router-trace-id',
  /** Opt-in session stickiness key for account selection (the older name of `sessionId`). */
  session: 'x-router-session',
  /** A conversation's id: keeps it on one account (and, under a combo's affinity, one target). */
  sessionId: 'x-router-session-id',
} as const;

/** Name of the dashboard session cookie (CONTRACT "Authentication"). */
export const SESSION_COOKIE = 'auth_token';
