/**
 * `router inspect`: the traffic inspector. A list of live requests; select one to see what is known about
 * it, and (when the daemon records them) its request and response headers and bodies, the client's
 * (translated) side next to the upstream side, with secrets masked.
 */
import { Box, Text } from 'ink';
import { useEffect, useState } from 'react';
import { query } from '../client.js';
import { cell, clock, fit, ms } from '../format.js';
import type { LogEntry, RequestEntry, TraceDetail } from '../types.js';
import { detailLines, isTraceDetail, TRACE_PATH, type DetailState } from './inspect-text.js';
import { addEntries, entryKey, fromLog } from './state.js';
import type { TuiSource } from './source.js';
import { Footer, Header, Line, statusColor, useLive, useKeys } from './ui.js';

export { detailLines, exchangeLines, metadataLines, TRACE_PATH } from './inspect-text.js';

export interface InspectViewProps {
  source: TuiSource;
  width: number;
  height: number;
  onBack?: () => void;
  onQuit: () => void;
}

/** Width at and above which list and detail sit side by side. */
const SPLIT_WIDTH = 110;

function listRow(e: RequestEntry, width: number): [string, string, string] {
  const model = Math.max(8, width - 8 - 1 - 3 - 1 - 7 - 1);
  return [`${cell(clock(e.timestamp), 8)} `, cell(String(e.status), 3), ` ${cell(`${e.provider}/${e.model}`, model)} ${cell(ms(e.latencyMs), 7, 'right')}`];
}

export function InspectView({ source, width, height, onBack, onQuit }: InspectViewProps) {
  const [entries, setEntries] = useState<RequestEntry[]>([]);
  /** Selected key; undefined follows the newest request. */
  const [selected, setSelected] = useState<string | undefined>();
  const [open, setOpen] = useState(false);
  const [tab, setTab] = useState<'request' | 'response'>('request');
  const [scroll, setScroll] = useState(0);
  const [details, setDetails] = useState<Map<string, DetailState>>(new Map());
  const [unsupported, setUnsupported] = useState(false);

  useEffect(() => {
    source
      .get<{ logs: LogEntry[] }>(`/api/logs${query({ limit: 100 })}`)
      .then((r) => setEntries((cur) => addEntries(fromLog(r.logs), cur)))
      .catch(() => {});
  }, [source]);
  const feed = useLive(source, (m) => {
    if (m.type === 'request') setEntries((cur) => addEntries(cur, [m]));
  });

  const split = width >= SPLIT_WIDTH;
  const index = selected === undefined ? entries.length - 1 : entries.findIndex((e) => entryKey(e) === selected);
  const current = index >= 0 ? entries[index] : undefined;
  const currentKey = current ? entryKey(current) : undefined;
  const showDetail = Boolean(current) && (split || open);

  // Headers and bodies are fetched when a request is looked at, once; a daemon without the route is asked once.
  useEffect(() => {
    if (!current || !showDetail || details.has(currentKey!)) return;
    if (unsupported) {
      setDetails((d) => new Map(d).set(currentKey!, { kind: 'unavailable' }));
      return;
    }
    setDetails((d) => new Map(d).set(currentKey!, { kind: 'loading' }));
    source
      .get<TraceDetail>(`${TRACE_PATH}${encodeURIComponent(current.traceId)}`)
      .then((detail) =>
        setDetails((d) =>
          new Map(d).set(currentKey!, isTraceDetail(detail) ? { kind: 'ok', detail } : { kind: 'error', message: 'the daemon replied with an unexpected shape' }),
        ),
      )
      .catch((err: Error & { status?: number }) => {
        // A daemon without the route is asked once per session; a 404 for one trace (not captured, or
        // no longer kept) says nothing about the next one, which is asked again.
        const noRoute = /no route/.test(err.message);
        if (noRoute) setUnsupported(true);
        const state: DetailState = noRoute ? { kind: 'unavailable' } : err.status === 404 ? { kind: 'unavailable', reason: err.message } : { kind: 'error', message: err.message };
        setDetails((d) => new Map(d).set(currentKey!, state));
      });
  }, [currentKey, showDetail, unsupported]);

  const move = (delta: number) => {
    if (entries.length === 0) return;
    const base = index < 0 ? entries.length - 1 : index;
    const next = Math.max(0, Math.min(entries.length - 1, base + delta));
    // A request the user moved to stays selected as new ones arrive; only `f` follows the newest again.
    setSelected(entryKey(entries[next]!));
    setScroll(0);
  };

  useKeys((input, key) => {
    if (input === 'q') return onQuit();
    if (key.escape) {
      if (open && !split) return setOpen(false);
      return onBack ? onBack() : onQuit();
    }
    if (key.tab) return setTab((t) => (t === 'request' ? 'response' : 'request'));
    if (input === 'f') return setSelected(undefined);
    if (key.return) {
      // Opening pins the request: its detail stays on it while new requests arrive.
      if (currentKey) setSelected(currentKey);
      return setOpen(true);
    }
    const inDetail = open && !split;
    if (key.upArrow || input === 'k') return inDetail ? setScroll((s) => Math.max(0, s - 1)) : move(-1);
    if (key.downArrow || input === 'j') return inDetail ? setScroll((s) => s + 1) : move(1);
    if (key.pageUp) return setScroll((s) => Math.max(0, s - (height - 3)));
    if (key.pageDown || input === ' ') return setScroll((s) => s + (height - 3));
  });

  const body = height - 2;
  const listWidth = split ? Math.max(40, Math.floor(width * 0.4)) : width;
  const detailWidth = split ? width - listWidth - 1 : width;
  const listStart = Math.max(0, Math.min(index - Math.floor(body / 2), entries.length - body));
  const list = entries.slice(Math.max(0, listStart), Math.max(0, listStart) + body);
  const detail = current ? detailLines(current, details.get(currentKey!), tab, detailWidth) : [];
  const maxScroll = Math.max(0, detail.length - body);
  const top = Math.min(scroll, maxScroll);

  const listPane = (
    <Box flexDirection="column" width={listWidth} height={body}>
      {entries.length === 0 ? <Line width={listWidth} text="waiting for requests…" dim /> : null}
      {list.map((e) => {
        const [a, b, c] = listRow(e, listWidth - 2);
        const isSel = entryKey(e) === currentKey;
        return (
          <Text key={entryKey(e)} inverse={isSel} wrap="truncate">
            {isSel ? '› ' : '  '}
            {a}
            <Text color={statusColor(e.status)}>{b}</Text>
            {c}
          </Text>
        );
      })}
    </Box>
  );
  const detailPane = (
    <Box flexDirection="column" width={detailWidth} height={body}>
      {detail.slice(top, top + body).map((l, i) => (
        <Line key={i} width={detailWidth} text={l} />
      ))}
    </Box>
  );
  const title = `router inspect · ${entries.length} requests${selected === undefined ? ' · following newest' : ''}`;
  const keys = showDetail
    ? `↑↓ ${split ? 'select' : 'scroll'}  tab ${tab === 'request' ? 'response' : 'request'}  f newest  ${split || !open ? (onBack ? 'esc back  ' : '') : 'esc list  '}q quit`
    : `↑↓ select  enter details  f follow newest  ${onBack ? 'esc back  ' : ''}q quit`;
  return (
    <Box flexDirection="column" width={width} height={height}>
      <Header title={fit(title, width)} width={width} feed={feed.state} />
      {split ? (
        <Box flexDirection="row" height={body}>
          {listPane}
          <Box width={1} />
          {detailPane}
        </Box>
      ) : open && current ? (
        detailPane
      ) : (
        listPane
      )}
      <Footer width={width} keys={keys} />
    </Box>
  );
}
