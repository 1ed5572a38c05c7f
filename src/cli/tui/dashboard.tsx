/**
 * `router dashboard`: one screen with the daemon's status, providers with their circuit and cooldown
 * state, combos, live throughput and errors; keys jump into the other views. Its data lives in a
 * DashboardModel that outlives the view (src/cli/tui/dashboard-model.ts: what is read, and how often).
 */
import { Box } from 'ink';
import { useEffect, useState, useSyncExternalStore } from 'react';
import { cell, clock, fit, sparkline, uptime } from '../format.js';
import { providerHeader, providerLines, providerRow } from './dashboard-text.js';
import { DashboardModel } from './dashboard-model.js';
import { throughputSeries } from './state.js';
import type { TuiSource } from './source.js';
import { Footer, Header, Line, useNow, useKeys } from './ui.js';

export { providerHeader, providerLines, providerRow } from './dashboard-text.js';
export { POLL } from './dashboard-model.js';

export interface DashboardProps {
  source: TuiSource;
  /** The session's model (kept by the App across view switches); a Dashboard alone makes its own. */
  model?: DashboardModel;
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

/** A model for a Dashboard used on its own: made on mount, disposed on unmount. */
function useOwnModel(source: TuiSource, given: DashboardModel | undefined, now: number | undefined): DashboardModel {
  const [own] = useState(() => (given ? undefined : new DashboardModel(source, now === undefined ? Date.now : () => now)));
  useEffect(() => () => own?.dispose(), [own]);
  return given ?? own!;
}

export function Dashboard({ source, model: given, width, height, onOpen, onQuit, now: fixedNow }: DashboardProps) {
  const model = useOwnModel(source, given, fixedNow);
  const { status, live, connections, combos, resilience, traffic, throughput, errors, problem, feed } = useSyncExternalStore(model.subscribe, model.snapshot);
  const now = useNow(1_000, fixedNow);

  useKeys((input) => {
    if (input === 'q') onQuit();
    else if (input === 'l') onOpen('logs');
    else if (input === 'u') onOpen('usage');
    else if (input === 'i') onOpen('inspect');
    else if (input === 'r') {
      void model.loadConfig();
      void model.loadResilience();
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
      // Colour carries meaning: a circuit that refuses requests (open, half-open) is yellow, errors are red.
      rows: provs.map((p) => ({ text: providerRow(p, width), color: p.circuit.startsWith('open') || p.circuit.startsWith('half') ? 'yellow' : p.errors > 0 ? 'red' : undefined })),
      empty: 'no providers yet: `router providers add <provider>`',
    },
    {
      title: { text: 'COMBOS', bold: true },
      rows: combos.map((c) => ({ text: `${c.name} (${c.strategy}): ${c.models.map((m) => m.model).join(', ')}` })),
      empty: 'no combos',
    },
    {
      title: { text: 'RECENT ERRORS', bold: true },
      rows: [...errors].reverse().map((e) => ({ text: `${clock(e.timestamp)} ${e.status} ${e.provider}/${e.model}  ${e.error ?? ''}`, color: 'red' })),
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
