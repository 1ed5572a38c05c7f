/**
 * Starts a TUI on the real terminal and gives it back in the state it was found: the alternate screen
 * is left and the cursor shown again on every way out (q, Ctrl-C, SIGTERM, SIGHUP, a crash).
 */
import { render } from 'ink';
import type { DaemonClient } from '../client.js';
import { App, type ViewName } from './app.js';
import { DaemonSource } from './source.js';
import type { RequestFilter } from './state.js';

const ENTER_ALT = '\u001b[?1049h\u001b[H';
const LEAVE_ALT = '\u001b[?1049l';
const SHOW_CURSOR = '\u001b[?25h';

export async function runTui(client: DaemonClient, view: ViewName, filter?: RequestFilter): Promise<number> {
  const source = new DaemonSource(client);
  const out = process.stdout;
  let restored = false;
  const restore = () => {
    if (restored) return;
    restored = true;
    out.write(LEAVE_ALT + SHOW_CURSOR);
  };
  out.write(ENTER_ALT);
  process.once('exit', restore);
  // Ink draws at most 10 frames a second: plenty for a monitor, and cheap on a busy daemon.
  const app = render(<App source={source} view={view} filter={filter} />, { exitOnCtrlC: true, patchConsole: true, maxFps: 10 });
  const stop = () => app.unmount();
  process.once('SIGTERM', stop);
  process.once('SIGHUP', stop);
  try {
    await app.waitUntilExit();
  } finally {
    process.off('SIGTERM', stop);
    process.off('SIGHUP', stop);
    app.cleanup();
    await source.close();
    restore();
  }
  return 0;
}
