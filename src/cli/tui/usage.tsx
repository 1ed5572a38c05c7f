/** `router usage --live`: tokens, cost and requests per provider or model, with per-minute sparklines. */
import { Box } from 'ink';
import { useEffect, useRef, useState } from 'react';
import { query } from '../client.js';
import { cell, clock, costTotal, int, sparkline, tokens, usd } from '../format.js';
import type { BreakdownRow, LiveRequest, Point } from '../types.js';
import { addRequest, emptyUsage, ranked, seedSeries, seedTotals, series, type Group, type Metric, type UsageState } from './state.js';
import type { TuiSource } from './source.js';
import { Footer, Header, Line, useLive, useNow, useKeys } from './ui.js';

/** The history the view starts from: the last hour, then every live request on top. */
const WINDOW_MS = 60 * 60_000;
/** Groups whose history is fetched per group (the rest start their sparkline empty). */
const SERIES_PER_GROUP = 6;

export interface UsageViewProps {
  source: TuiSource;
  width: number;
  height: number;
  onBack?: () => void;
  onQuit: () => void;
  /** Fixed clock for tests. */
  now?: number;
}

/** Fetches the starting point: breakdowns by provider and model, and per-minute series of the top groups. */
export async function loadUsage(source: TuiSource, now: number): Promise<{ state: UsageState; to: number }> {
  const from = now - WINDOW_MS;
  const to = now + 1;
  const s = emptyUsage(from);
  const [byProvider, byModel, total] = await Promise.all([
    source.get<{ rows: BreakdownRow[] }>(`/api/usage/breakdown${query({ by: 'provider', from, to })}`),
    source.get<{ rows: BreakdownRow[] }>(`/api/usage/breakdown${query({ by: 'model', from, to })}`),
    source.get<{ points: Point[] }>(`/api/usage/timeseries${query({ bucket: 'minute', from, to })}`),
  ]);
  for (const r of byProvider.rows) {
    seedTotals(s, 'provider', r.key ?? '-', r);
    seedTotals(s, 'total', 'total', r);
  }
  for (const r of byModel.rows) seedTotals(s, 'model', r.key ?? '-', r);
  seedSeries(s, 'total', 'total', total.points);
  const top = (rows: BreakdownRow[]) => [...rows].sort((a, b) => b.requests - a.requests).slice(0, SERIES_PER_GROUP).map((r) => r.key).filter((k): k is string => k !== null);
  await Promise.all([
    ...top(byProvider.rows).map(async (p) => seedSeries(s, 'provider', p, (await source.get<{ points: Point[] }>(`/api/usage/timeseries${query({ bucket: 'minute', from, to, provider: p })}`)).points)),
    ...top(byModel.rows).map(async (m) => seedSeries(s, 'model', m, (await source.get<{ points: Point[] }>(`/api/usage/timeseries${query({ bucket: 'minute', from, to, model: m })}`)).points)),
  ]);
  return { state: s, to };
}

const METRICS: Metric[] = ['requests', 'tokens', 'costUsd'];
const METRIC_LABEL: Record<Metric, string> = { requests: 'requests', tokens: 'tokens', costUsd: 'cost' };

/** One table row: name, requests, errors, tokens, cost, then the sparkline in the remaining width. */
export function usageRow(g: Group, label: string, width: number, metric: Metric, now: number): string {
  const name = Math.max(14, Math.min(32, Math.floor(width * 0.3)));
  const fixed = `${cell(label, name)} ${cell(int(g.requests), 7, 'right')} ${cell(int(g.errors), 5, 'right')} ${cell(tokens(g.tokens), 7, 'right')} ${cell(g.unpriced && !g.costUsd ? 'unpriced' : usd(g.costUsd), 9, 'right')} `;
  const spark = Math.max(0, width - fixed.length);
  return fixed + sparkline(series(g, metric, spark, now), spark);
}

export function usageHeader(width: number): string {
  const name = Math.max(14, Math.min(32, Math.floor(width * 0.3)));
  const fixed = `${cell('NAME', name)} ${cell('REQ', 7, 'right')} ${cell('ERR', 5, 'right')} ${cell('TOKENS', 7, 'right')} ${cell('COST', 9, 'right')} `;
  const spark = Math.max(0, width - fixed.length);
  return fixed + cell(`per minute, last ${spark} min`, spark);
}

export function UsageView({ source, width, height, onBack, onQuit, now: fixedNow }: UsageViewProps) {
  const [state, setState] = useState<UsageState | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [by, setBy] = useState<'provider' | 'model'>('provider');
  const [metric, setMetric] = useState<Metric>('requests');
  const [rps, setRps] = useState<number | undefined>();
  const pending = useRef<LiveRequest[] | null>([]);
  const now = useNow(5_000, fixedNow);

  useEffect(() => {
    let live = true;
    loadUsage(source, fixedNow ?? Date.now())
      .then(({ state: s, to }) => {
        if (!live) return;
        // Requests that arrived while loading and are not in the loaded totals yet.
        let next = s;
        for (const e of pending.current ?? []) if (Date.parse(e.timestamp) >= to) next = addRequest(next, e);
        pending.current = null;
        setState(next);
      })
      .catch((err: Error) => live && setError(err.message));
    return () => {
      live = false;
    };
  }, [source]);

  const feed = useLive(source, (m) => {
    if (m.type === 'status') setRps(m.requestsPerSecond);
    else if (pending.current) pending.current.push(m);
    else setState((s) => (s ? addRequest(s, m) : s));
  });

  useKeys((input, key) => {
    if (input === 'q') return onQuit();
    if (key.escape) return onBack ? onBack() : onQuit();
    if (input === 'g') setBy((b) => (b === 'provider' ? 'model' : 'provider'));
    else if (input === 't') setMetric((m) => METRICS[(METRICS.indexOf(m) + 1) % METRICS.length]!);
  });

  const rows = Math.max(1, height - 6);
  const groups = state ? ranked(state[by], metric).slice(0, rows) : [];
  const t = state?.total;
  return (
    <Box flexDirection="column" width={width} height={height}>
      <Header title={`router usage · since ${state ? clock(new Date(state.since).toISOString()) : '…'} UTC`} width={width} feed={feed.state} />
      <Line
        width={width}
        text={t ? `requests ${int(t.requests)}  errors ${int(t.errors)}  tokens ${tokens(t.tokens)}  cost ${costTotal(t.costUsd, t.unpriced)}${rps === undefined ? '' : `  rate ${rps.toFixed(1)}/s`}` : error ? `error: ${error}` : 'loading…'}
        color={error ? 'red' : undefined}
      />
      <Line width={width} text={`by ${by} · sparklines show ${METRIC_LABEL[metric]}`} dim />
      <Line width={width} text={usageHeader(width)} bold />
      {t ? <Line width={width} text={usageRow(t, 'all', width, metric, now)} bold /> : <Line width={width} text="" />}
      <Box flexDirection="column" height={rows}>
        {state && groups.length === 0 ? <Line width={width} text="no requests in the last hour yet" dim /> : null}
        {groups.map((g) => (
          <Line key={g.key} width={width} text={usageRow(g, g.key, width, metric, now)} />
        ))}
      </Box>
      <Footer width={width} keys={`g by ${by === 'provider' ? 'model' : 'provider'}  t sparkline: ${METRIC_LABEL[METRICS[(METRICS.indexOf(metric) + 1) % 3]!]}  ${onBack ? 'esc back  ' : ''}q quit`} />
    </Box>
  );
}
