/** `router logs -f` on a terminal: the live request stream with filters by provider, model and status. */
import { Box, Text } from 'ink';
import { useEffect, useMemo, useState } from 'react';
import { query } from '../client.js';
import { cell, clock, ms, tokens, cost } from '../format.js';
import type { LogEntry, RequestEntry } from '../types.js';
import { addEntries, applyFilter, cycle, distinct, fromLog, STATUS_CHOICES, type RequestFilter } from './state.js';
import type { TuiSource } from './source.js';
import { Footer, Header, Line, statusColor, useLive, useKeys } from './ui.js';

export interface LogsViewProps {
  source: TuiSource;
  width: number;
  height: number;
  initialFilter?: RequestFilter;
  /** Esc: back to the dashboard (absent when the view was opened on its own). */
  onBack?: () => void;
  onQuit: () => void;
}

/** Column widths for a terminal width: the model column takes what the fixed ones leave. */
export function logColumns(width: number) {
  const fixed = { time: 8, status: 3, tin: 6, tout: 6, cost: 8, latency: 7 };
  const gaps = 7;
  const rest = width - (fixed.time + fixed.status + fixed.tin + fixed.tout + fixed.cost + fixed.latency + gaps);
  const model = Math.max(12, Math.min(rest, 48));
  const error = Math.max(0, rest - model - 1);
  return { ...fixed, model, error };
}

export function logHeader(width: number): string {
  const c = logColumns(width);
  const parts = [cell('TIME', c.time), cell('ST', c.status), cell('MODEL', c.model), cell('IN', c.tin, 'right'), cell('OUT', c.tout, 'right'), cell('COST', c.cost, 'right'), cell('LATENCY', c.latency, 'right')];
  if (c.error > 0) parts.push(cell('ERROR / VIA', c.error));
  return parts.join(' ');
}

/** The three parts of a row: before the status, the status (coloured), after it. */
export function logRow(e: RequestEntry, width: number): [string, string, string] {
  const c = logColumns(width);
  const served = `${e.provider}/${e.model}`;
  const via = e.requestedModel && e.requestedModel !== served ? `via ${e.requestedModel}` : '';
  const tail = [cell(served, c.model), cell(tokens(e.tokensIn), c.tin, 'right'), cell(tokens(e.tokensOut), c.tout, 'right'), cell(cost(e.costUsd), c.cost, 'right'), cell(ms(e.latencyMs), c.latency, 'right')];
  if (c.error > 0) tail.push(cell(e.error ?? via, c.error));
  return [`${cell(clock(e.timestamp), c.time)} `, cell(String(e.status), c.status), ` ${tail.join(' ')}`];
}

export function describeFilter(f: RequestFilter): string {
  const parts = [f.provider && `provider=${f.provider}`, f.model && `model=${f.model}`, f.status && `status=${f.status}`].filter(Boolean);
  return parts.length ? parts.join(' ') : 'all requests';
}

export function LogsView({ source, width, height, initialFilter = {}, onBack, onQuit }: LogsViewProps) {
  const [entries, setEntries] = useState<RequestEntry[]>([]);
  const [filter, setFilter] = useState<RequestFilter>(initialFilter);
  const [paused, setPaused] = useState(false);
  const [frozen, setFrozen] = useState<RequestEntry[] | undefined>();
  /** Rows scrolled up from the newest; 0 follows the stream. */
  const [offset, setOffset] = useState(0);
  const [error, setError] = useState<string | undefined>();

  useEffect(() => {
    let live = true;
    source
      .get<{ logs: LogEntry[] }>(`/api/logs${query({ limit: 200, provider: initialFilter.provider, model: initialFilter.model, status: initialFilter.status, key: initialFilter.key })}`)
      .then((r) => live && setEntries((cur) => addEntries(fromLog(r.logs), cur)))
      .catch((err: Error) => live && setError(err.message));
    return () => {
      live = false;
    };
  }, [source]);

  const feed = useLive(source, (m) => {
    if (m.type === 'request') setEntries((cur) => addEntries(cur, [m]));
  });

  const shownAll = useMemo(() => applyFilter(frozen ?? entries, filter), [frozen, entries, filter]);
  const rows = Math.max(1, height - 3);
  const maxOffset = Math.max(0, shownAll.length - rows);
  const start = Math.max(0, shownAll.length - rows - Math.min(offset, maxOffset));
  const visible = shownAll.slice(start, start + rows);
  const newer = paused ? applyFilter(entries, filter).length - shownAll.length : 0;

  useKeys((input, key) => {
    if (input === 'q') return onQuit();
    if (key.escape) return onBack ? onBack() : onQuit();
    if (input === 'p') setFilter((f) => ({ ...f, provider: cycle(distinct(entries, (e) => e.provider), f.provider) }));
    else if (input === 'm') setFilter((f) => ({ ...f, model: cycle(distinct(entries, (e) => `${e.provider}/${e.model}`), f.model) }));
    else if (input === 's') setFilter((f) => ({ ...f, status: cycle(STATUS_CHOICES, f.status as (typeof STATUS_CHOICES)[number] | undefined) }));
    else if (input === 'c') setFilter({});
    else if (input === ' ') {
      setPaused((p) => !p);
      setFrozen((fz) => (fz ? undefined : entries));
    } else if (key.upArrow || input === 'k') setOffset((o) => Math.min(maxOffset, o + 1));
    else if (key.downArrow || input === 'j') setOffset((o) => Math.max(0, o - 1));
    else if (key.pageUp) setOffset((o) => Math.min(maxOffset, o + rows));
    else if (key.pageDown) setOffset((o) => Math.max(0, o - rows));
    else if (input === 'G' || key.end) setOffset(0);
  });

  const right = `${shownAll.length} shown${paused ? ` · paused${newer > 0 ? ` (+${newer})` : ''}` : ''}${offset > 0 ? ' · scrolled' : ''}`;
  return (
    <Box flexDirection="column" width={width} height={height}>
      <Header title={`router logs · ${describeFilter(filter)}`} width={width} feed={feed.state} right={right} />
      <Line text={logHeader(width)} width={width} bold />
      <Box flexDirection="column" height={rows}>
        {error ? <Line text={`error: ${error}`} width={width} color="red" /> : null}
        {visible.length === 0 && !error ? <Line text="waiting for requests…" width={width} dim /> : null}
        {visible.map((e, i) => {
          const [a, b, c] = logRow(e, width);
          return (
            <Text key={`${start + i}`} wrap="truncate">
              {a}
              <Text color={statusColor(e.status)}>{b}</Text>
              {c}
            </Text>
          );
        })}
      </Box>
      <Footer width={width} keys={`p provider  m model  s status  c clear  space ${paused ? 'resume' : 'pause'}  ↑↓ scroll  ${onBack ? 'esc back  ' : ''}q quit`} />
    </Box>
  );
}
