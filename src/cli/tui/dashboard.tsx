/**
 * `router dashboard`: one screen with the daemon's status, providers with their circuit and cooldown
 * state, combos, live throughput and errors; keys jump into the other views.
 *
 * What it reads, and how often: the live WebSocket for requests and status (pushed, every 2 s); the
 * breaker state every 5 s (`GET /api/resilience`, not on the live channel); connections and combos
 * every 30 s (they change only when someone edits them); `r` refreshes all at once.
 */
import { Box } from 'ink';
import { useCallback, useState } from 'react';
import { cell, clock, fit, sparkline, uptime } from '../format.js';
import type { StatusReply } from '../../shared/wire.js';
import type { ComboRecord, LiveStatus, PublicConnection, RequestEntry, ResilienceReply } from '../types.js';
import { providerHeader, providerLines, providerRow } from './dashboard-text.js';
import { addThroughput, throughputSeries, type Throughput } from './state.js';
import type { TuiSource } from './source.js';
import { Footer, Header, Line, useLive, useNow, usePoll, useKeys } from './ui.js';

export { providerHeader, providerLines, providerRow } from './dashboard-text.js';

export const POLL = { resilienceMs: 5_000, configMs: 30_000 };

export interface DashboardProps {
  source: TuiSource;
  width: number;
  height: number;
  onOpen: (view: 'logs' | 'usage' | 'inspect') => void;
  onQuit: () => void;
  now?: number;
}

interface Row {
  text: string;
  color?: string;
  bold?: boolean;
  dim?: boolean;
}

export function Dashboard({ source, width, height, onOpen, onQuit, now: fixedNow }: DashboardProps) {
  const [status, setStatus] = useState<StatusReply | undefined>();
  const [live, setLive] = useState<LiveStatus | undefined>();
  const [connections, setConnections] = useState<PublicConnection[]>([]);
  const [combos, setCombos] = useState<ComboRecord[]>([]);
  const [resilience, setResilience] = useState<ResilienceReply | undefined>();
  const [traffic, setTraffic] = useState<Map<string, { requests: number; errors: number }>>(new Map());
  const [throughput, setThroughput] = useState<Throughput>({ seconds: new Map() });
  const [errors, setErrors] = useState<RequestEntry[]>([]);
  const [problem, setProblem] = useState<string | undefined>();
  const now = useNow(1_000, fixedNow);

  const guard = (p: Promise<unknown>) => p.then(() => setProblem(undefined)).catch((err: Error) => setProblem(err.message));
  const loadConfig = useCallback(
    () =>
      guard(
        Promise.all([
          source.get<StatusReply>('/api/system/status').then(setStatus),
          source.get<{ connections: PublicConnection[] }>('/api/providers').then((r) => setConnections(r.connections)),
          source.get<{ combos: ComboRecord[] }>('/api/combos').then((r) => setCombos(r.combos)),
        ]),
      ),
    [source],
  );
  const loadResilience = useCallback(() => guard(source.get<ResilienceReply>('/api/resilience').then(setResilience)), [source]);
  usePoll(loadConfig, POLL.configMs);
  usePoll(loadResilience, POLL.resilienceMs);

  const feed = useLive(source, (m) => {
    if (m.type === 'status') return setLive(m);
    setThroughput((t) => addThroughput(t, m));
    setTraffic((t) => {
      const next = new Map(t);
      const cur = next.get(m.provider) ?? { requests: 0, errors: 0 };
      next.set(m.provider, { requests: cur.requests + 1, errors: cur.errors + (m.status >= 400 ? 1 : 0) });
      return next;
    });
    if (m.status >= 400) setErrors((e) => [...e.slice(-19), m]);
  });

  useKeys((input) => {
    if (input === 'q') onQuit();
    else if (input === 'l') onOpen('logs');
    else if (input === 'u') onOpen('usage');
    else if (input === 'i') onOpen('inspect');
    else if (input === 'r') {
      void loadConfig();
      void loadResilience();
    }
  });

  const up = live?.uptimeSeconds ?? status?.uptimeSeconds;
  const title = `router dashboard · ${status?.url ?? source.url} · v${live?.version ?? status?.version ?? '?'}${up === undefined || up === null ? '' : ` · up ${uptime(up)}`}`;
  const label = 22;
  const spark = Math.max(10, width - label - 12);
  const req = throughputSeries(throughput, spark, now);
  const err = throughputSeries(throughput, spark, now, 1, 'errors');
  const lastMinute = throughputSeries(throughput, 60, now).reduce((a, b) => a + b, 0);
  const lastMinuteErr = throughputSeries(throughput, 60, now, 1, 'errors').reduce((a, b) => a + b, 0);

  const top: Row[] = [
    {
      text: `daemon  pid ${status?.pid ?? '?'}  in flight ${live?.inFlight ?? 0}  streams ${live?.openStreams ?? 0}  rate ${(live?.requestsPerSecond ?? 0).toFixed(1)}/s  last min ${lastMinute} req, ${lastMinuteErr} err`,
    },
    { text: `${cell(`requests/s (${spark}s)`, label)}${sparkline(req, spark)} ${cell(String(Math.max(0, ...req)), 4, 'right')} max`, color: 'cyan' },
    { text: `${cell('errors/s', label)}${sparkline(err, spark)} ${cell(String(Math.max(0, ...err)), 4, 'right')} max`, color: 'red' },
  ];
  if (problem) top.push({ text: `problem: ${problem}`, color: 'red' });

  const provs = providerLines(connections, resilience, traffic, now);
  const sections: Array<{ title: Row; rows: Row[]; empty: string }> = [
    {
      title: { text: providerHeader(width), bold: true },
      rows: provs.map((p) => ({ text: providerRow(p, width), color: p.circuit.startsWith('open') ? 'red' : p.circuit.startsWith('half') ? 'yellow' : undefined })),
      empty: 'no providers yet: `router providers add <provider>`',
    },
    {
      title: { text: 'COMBOS', bold: true },
      rows: combos.map((c) => ({ text: `${c.name} (${c.strategy}): ${c.models.map((m) => m.model).join(', ')}` })),
      empty: 'no combos',
    },
    {
      title: { text: 'RECENT ERRORS', bold: true },
      rows: [...errors].reverse().map((e) => ({ text: `${clock(e.timestamp)} ${e.status} ${e.provider}/${e.model}  ${e.error ?? ''}`, color: 'yellow' })),
      empty: 'none this session',
    },
  ];
  // Share the lines left among the sections: each gets its title and at least one row, then the rest in order.
  let budget = height - 2 - top.length - sections.length * 2;
  const shown = sections.map((s) => ({ ...s, take: 1 }));
  for (const s of shown) {
    const extra = Math.max(0, Math.min(s.rows.length - 1, budget));
    s.take += extra;
    budget -= extra;
  }
  const lines: Row[] = [...top];
  for (const s of shown) {
    lines.push(s.title);
    if (s.rows.length === 0) lines.push({ text: s.empty, dim: true });
    else {
      const rows = s.rows.slice(0, s.take);
      if (s.rows.length > s.take) rows[rows.length - 1] = { text: `… ${s.rows.length - s.take + 1} more`, dim: true };
      lines.push(...rows);
    }
  }
  return (
    <Box flexDirection="column" width={width} height={height}>
      <Header title={fit(title, width)} width={width} feed={feed.state} />
      <Box flexDirection="column" height={height - 2}>
        {lines.slice(0, height - 2).map((l, i) => (
          <Line key={i} width={width} text={l.text} color={l.color} bold={l.bold} dim={l.dim} />
        ))}
      </Box>
      <Footer width={width} keys="l logs  u usage  i inspect  r refresh  q quit" />
    </Box>
  );
}
