/** Building blocks every view shares: terminal size, the live subscription, a clock, header and footer. */
import { Box, Text, useInput, useStdout, type Key } from 'ink';
import { createContext, useCallback, useContext, useEffect, useRef, useState, type MutableRefObject, type ReactNode } from 'react';
import { fit } from '../format.js';
import type { LiveMessage } from '../types.js';
import type { FeedState, TuiSource } from './source.js';

export interface Size {
  width: number;
  height: number;
}

/**
 * The usable size of the terminal, updated on resize. One line is kept free: Ink redraws the whole
 * screen (and flickers) whenever its output is as tall as the terminal.
 */
export function useTerminalSize(): Size {
  const { stdout } = useStdout();
  const read = (): Size => ({ width: Math.max(40, stdout.columns || 80), height: Math.max(10, (stdout.rows || 24) - 1) });
  const [size, setSize] = useState(read);
  useEffect(() => {
    const onResize = () => setSize(read());
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  }, [stdout]);
  return size;
}

type KeyHandler = (input: string, key: Key) => void;

/** Set by KeyRouter: the handler of the view drawn last. */
const ActiveKeys = createContext<MutableRefObject<KeyHandler | undefined> | null>(null);

/**
 * One key listener for a whole TUI session, owned by the App and never re-subscribed. The view being
 * drawn registers its handler while it renders, so a key always reaches the view on the screen, with
 * that render's state. (Listeners per view are attached after the paint, and switching views would
 * toggle raw mode, which drops a half-read escape sequence: keys typed during a switch were lost.)
 */
export function KeyRouter({ children }: { children: ReactNode }) {
  const active = useRef<KeyHandler | undefined>(undefined);
  const dispatch = useCallback((input: string, key: Key) => active.current?.(input, key), []);
  useInput(dispatch);
  return <ActiveKeys.Provider value={active}>{children}</ActiveKeys.Provider>;
}

/**
 * A view's keys. Inside a KeyRouter the handler is registered during render; alone (tests, embedding)
 * the view listens itself through one stable listener that calls the latest render's handler.
 */
export function useKeys(handler: KeyHandler): void {
  const router = useContext(ActiveKeys);
  const latest = useRef(handler);
  latest.current = handler;
  if (router) router.current = handler;
  const stable = useCallback((input: string, key: Key) => latest.current(input, key), []);
  useInput(stable, { isActive: !router });
}

/** Calls `onMessage` for every live message while mounted; returns the connection state. */
export function useLive(source: TuiSource, onMessage: (m: LiveMessage) => void): { state: FeedState; detail?: string } {
  const handler = useRef(onMessage);
  handler.current = onMessage;
  const [state, setState] = useState<{ state: FeedState; detail?: string }>({ state: 'connecting' });
  useEffect(
    () =>
      source.subscribe(
        (m) => handler.current(m),
        (s, detail) => setState({ state: s, detail }),
      ),
    [source],
  );
  return state;
}

/**
 * The current time at each render, with a re-render every `ms` so sparklines move on when nothing else
 * happens. (A clock kept in state would lag up to `ms` behind the requests it is compared with.)
 */
export function useNow(ms: number, fixed?: number): number {
  const [, setTick] = useState(0);
  useEffect(() => {
    if (fixed !== undefined) return;
    const t = setInterval(() => setTick((n) => n + 1), ms);
    return () => clearInterval(t);
  }, [ms, fixed]);
  return fixed ?? Date.now();
}

const FEED_LABEL: Record<FeedState, string> = { connecting: 'connecting…', open: 'live', reconnecting: 'reconnecting…', closed: 'closed' };

/** The top line: view title on the left, live state on the right. */
export function Header({ title, width, feed, right }: { title: string; width: number; feed?: FeedState; right?: string }) {
  const status = [right, feed ? `● ${FEED_LABEL[feed]}` : undefined].filter(Boolean).join('  ');
  const left = fit(title, Math.max(0, width - status.length - 1));
  return (
    <Box width={width}>
      <Text bold inverse>
        {`${left}${' '.repeat(Math.max(1, width - left.length - status.length))}${status}`.slice(0, width)}
      </Text>
    </Box>
  );
}

/** The bottom line: the keys of this view. */
export function Footer({ keys, width }: { keys: string; width: number }) {
  return (
    <Text dimColor wrap="truncate">
      {fit(keys, width)}
    </Text>
  );
}

/** One line, cut to the width (never wraps: wrapping would break the fixed layout). */
export function Line({ text, width, color, bold, dim, inverse }: { text: string; width: number; color?: string; bold?: boolean; dim?: boolean; inverse?: boolean }) {
  return (
    <Text color={color} bold={bold} dimColor={dim} inverse={inverse} wrap="truncate">
      {fit(text, width)}
    </Text>
  );
}

/** Colour of an HTTP status. */
export function statusColor(status: number): string {
  if (status >= 500) return 'red';
  if (status >= 400) return 'yellow';
  return 'green';
}
