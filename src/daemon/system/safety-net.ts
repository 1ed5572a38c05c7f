import { appendFileSync } from 'node:fs';

/**
 * The daemon's last line of defence against an error nothing caught (an 'error' event without a listener, a
 * throw in a timer, a rejected promise nobody awaited). Before the daemon is serving such an error is fatal:
 * the start failed, and exiting says so. Once it serves, one request's fault must not end the process for
 * every other client: the error is logged (with its stack, to the daemon log only, never to a client) and
 * the daemon keeps serving. The root causes are still fixed where they are found; this only contains them.
 */
export interface SafetyNet {
  /** Switches from "fatal" to "log and keep serving" (called once the daemon listens). */
  contain(): void;
  /** Errors contained so far (for tests and the log). */
  readonly contained: number;
}

function describe(err: unknown): string {
  return err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err);
}

/**
 * Installs process-wide handlers for uncaught exceptions and unhandled rejections. Lines are appended
 * synchronously to `logFile`: this runs only when something already went wrong, never per request.
 */
export function installSafetyNet(logFile: string, options: { echo?: boolean; exit?: (code: number) => void } = {}): SafetyNet {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let serving = false;
  let contained = 0;
  const write = (line: string) => {
    try {
      if (options.echo) process.stderr.write(line);
      appendFileSync(logFile, line, { mode: 0o600 });
    } catch {
      // the log cannot be written: nothing else to tell
    }
  };
  const handler = (kind: string) => (err: unknown) => {
    if (!serving) {
      write(`${new Date().toISOString()} FATAL ${kind}: ${describe(err)}\n`);
      exit(70);
      return;
    }
    contained++;
    write(`${new Date().toISOString()} ERROR ${kind} (contained; the daemon keeps serving): ${describe(err)}\n`);
  };
  process.on('uncaughtException', handler('uncaught exception'));
  process.on('unhandledRejection', handler('unhandled rejection'));
  return {
    contain() {
      serving = true;
    },
    get contained() {
      return contained;
    },
  };
}
