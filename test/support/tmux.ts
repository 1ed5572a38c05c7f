/**
 * Driving a command in a real pseudo-terminal with tmux (Debian's package; `.ci/run` installs it): a server
 * of the test's own (`-L`), no user config, and waits on what the screen shows, polled with a deadline.
 */
import { spawnSync } from 'node:child_process';

export const HAS_TMUX = spawnSync('tmux', ['-V']).status === 0;

/** Runs `tmux <args>` on the socket `socket`; throws with tmux's message when it fails. */
export function tmuxOn(socket: string): (...args: string[]) => string {
  return (...args) => {
    const r = spawnSync('tmux', ['-L', socket, '-f', '/dev/null', ...args], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`tmux ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
}

/** Polls `read` (a screen capture) until `pred` holds; on the deadline fails with the last screen. */
export async function waitScreen(read: () => string, pred: (s: string) => boolean, what: string, ms = 15_000): Promise<string> {
  const deadline = Date.now() + ms;
  let last = '';
  while (Date.now() < deadline) {
    last = read();
    if (pred(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}; the screen was:\n${last}`);
}
