import { useMemo, useRef, useState } from 'react';
import { api } from '../api/client';
import { useLive } from '../api/live';
import type { BreakdownRow, Point, SeriesGroup } from '../api/replies';
import { type ChartSeries, COLORS, TimeChart } from '../ui/chart';
import { Empty, ErrorBox, fmt, Section, Stat, useData } from '../ui/kit';

const PERIODS = { '24h': { ms: 86400_000, bucket: 'hour' }, '7d': { ms: 7 * 86400_000, bucket: 'hour' }, '30d': { ms: 30 * 86400_000, bucket: 'day' } } as const;
type Period = keyof typeof PERIODS;
const GROUPS = ['provider', 'model', 'key', 'combo', 'connection'] as const;
type Group = (typeof GROUPS)[number];
const METRICS = { requests: 'requests', tokens: 'tokens (in + out)', cost: 'cost (USD)' } as const;
type Metric = keyof typeof METRICS;

function csvCell(v: unknown): string {
  const s = v == null ? '' : String(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** Downloads rows as a CSV file (made in the browser from the API's JSON). */
function downloadCsv(name: string, header: string[], rows: unknown[][]): void {
  const text = [header, ...rows].map((r) => r.map(csvCell).join(',')).join('\n');
  const url = URL.createObjectURL(new Blob([`${text}\n`], { type: 'text/csv' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/**
 * Usage and cost over a period: charts (filtered by provider, model, key or combo; per key and per combo),
 * breakdown by provider/model/key/combo, token kinds, latency percentiles, CSV.
 */
export function Usage() {
  const [period, setPeriod] = useState<Period>('24h');
  const [group, setGroup] = useState<Group>('provider');
  const [provider, setProvider] = useState('');
  const [model, setModel] = useState('');
  const [key, setKey] = useState('');
  const [combo, setCombo] = useState('');
  const [metric, setMetric] = useState<Metric>('requests');
  const choices = useData(() => Promise.all([api('GET /api/keys'), api('GET /api/combos')]));
  const data = useData(async () => {
    const p = PERIODS[period];
    const from = new Date(Date.now() - p.ms).toISOString();
    const filter = { bucket: p.bucket, from, provider: provider || undefined, model: model || undefined, key: key || undefined, combo: combo || undefined };
    const [summary, series, byKey, byCombo, breakdown, telemetry] = await Promise.all([
      api('GET /api/usage/summary', { query: { from } }),
      api('GET /api/usage/timeseries', { query: filter }),
      api('GET /api/usage/timeseries', { query: { ...filter, groupBy: 'key' } }),
      api('GET /api/usage/timeseries', { query: { ...filter, groupBy: 'combo' } }),
      api('GET /api/usage/breakdown', { query: { by: group, from } }),
      api('GET /api/telemetry/summary', { query: { minutes: Math.min(1440, p.ms / 60000) } }),
    ]);
    return { summary, points: series.points, byKey, byCombo, rows: breakdown.rows, telemetry };
  }, [period, group, provider, model, key, combo]);
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  useLive({
    request: () => {
      if (!timer.current) timer.current = setTimeout(() => { timer.current = undefined; void data.reload(); }, 1000);
    },
  });
  const charts = useMemo(() => build(data.data?.points ?? []), [data.data]);
  const keyChart = useMemo(() => buildGroups(data.data?.byKey.series ?? [], metric, '(no key)'), [data.data, metric]);
  const comboChart = useMemo(() => buildGroups(data.data?.byCombo.series ?? [], metric, '(no combo)'), [data.data, metric]);
  const d = data.data;
  const [keys, combos] = choices.data ?? [{ keys: [] }, { combos: [] }];
  return (
    <>
      <fieldset className="toolbar">
        <legend className="sr-only">Period and filters</legend>
        <label>
          Period{' '}
          <select value={period} onChange={(e) => setPeriod(e.target.value as Period)}>
            <option value="24h">last 24 hours</option>
            <option value="7d">last 7 days</option>
            <option value="30d">last 30 days</option>
          </select>
        </label>
        <label>
          Provider <input value={provider} onChange={(e) => setProvider(e.target.value.trim())} placeholder="all" size={12} />
        </label>
        <label>
          Model <input value={model} onChange={(e) => setModel(e.target.value.trim())} placeholder="all" size={14} />
        </label>
        <label>
          Key{' '}
          <select value={key} onChange={(e) => setKey(e.target.value)} aria-label="Key">
            <option value="">all</option>
            {keys.keys.map((k) => (
              <option key={k.id} value={k.id}>
                {k.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Combo{' '}
          <select value={combo} onChange={(e) => setCombo(e.target.value)} aria-label="Combo">
            <option value="">all</option>
            {combos.combos.map((c) => (
              <option key={c.id} value={c.name}>
                {c.name}
              </option>
            ))}
          </select>
        </label>
        <button
          type="button"
          disabled={!d}
          onClick={() =>
            d &&
            downloadCsv(
              `router-usage-${group}-${period}.csv`,
              [group, 'requests', 'errors', 'input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens', 'reasoning_tokens', 'cost_usd', 'unpriced_requests', 'avg_latency_ms'],
              d.rows.map((r) => [r.name ?? r.key, r.requests, r.errors, r.tokens.input, r.tokens.output, r.tokens.cacheRead, r.tokens.cacheWrite, r.tokens.reasoning, r.costUsd, r.unpricedRequests, r.avgLatencyMs]),
            )
          }
        >
          Export CSV
        </button>
      </fieldset>
      <ErrorBox error={data.error} />
      <div className="stats">
        <Stat label="Requests" value={fmt.int(d?.summary.requests)} sub={d ? `${fmt.int(d.summary.errors)} errors` : undefined} />
        <Stat label="Input tokens" value={fmt.int(d?.summary.tokens.input)} sub={d ? `${fmt.int(d.summary.tokens.cacheRead)} cache read` : undefined} />
        <Stat label="Output tokens" value={fmt.int(d?.summary.tokens.output)} sub={d ? `${fmt.int(d.summary.tokens.reasoning)} reasoning` : undefined} />
        <Stat label="Cost" value={fmt.usd(d?.summary.costUsd)} sub={fmt.unpriced(d?.summary.unpricedRequests)} />
        <Stat label="Avg latency" value={fmt.ms(d?.summary.avgLatencyMs)} />
      </div>
      <div className="grid2">
        <Section title="Requests">
          <TimeChart title="Requests and errors" x={charts.x} series={charts.requests} />
        </Section>
        <Section title="Tokens">
          <TimeChart title="Tokens in and out" x={charts.x} series={charts.tokens} />
        </Section>
      </div>
      <Section title="Cost">
        <TimeChart title="Cost (USD)" x={charts.x} series={charts.cost} height={140} />
        <CostNote points={data.data?.points ?? []} />
      </Section>
      <Section
        title="By key and by combo"
        actions={
          <label>
            Show{' '}
            <select value={metric} onChange={(e) => setMetric(e.target.value as Metric)} aria-label="Show">
              {Object.entries(METRICS).map(([m, label]) => (
                <option key={m} value={m}>
                  {label}
                </option>
              ))}
            </select>
          </label>
        }
      >
        <div className="grid2">
          <GroupChart title={`${METRICS[metric]} by key`} x={charts.x} chart={keyChart} others={d?.byKey.otherGroups} cost={metric === 'cost' ? d?.byKey.series : undefined} />
          <GroupChart title={`${METRICS[metric]} by combo`} x={charts.x} chart={comboChart} others={d?.byCombo.otherGroups} cost={metric === 'cost' ? d?.byCombo.series : undefined} />
        </div>
      </Section>
      <Section
        title="Breakdown"
        actions={
          <div role="tablist" aria-label="Group by">
            {GROUPS.map((g) => (
              <button key={g} type="button" role="tab" aria-selected={g === group} className={g === group ? 'tab on' : 'tab'} onClick={() => setGroup(g)}>
                by {g === 'connection' ? 'account' : g}
              </button>
            ))}
          </div>
        }
      >
        {d && d.rows.length === 0 ? <Empty>No traffic in this period. Send a request through /v1 with a key and it shows here.</Empty> : null}
        {d?.rows.length ? <BreakdownTable rows={d.rows} group={group} /> : null}
      </Section>
      <Section title="Latency percentiles per provider">
        {d && d.telemetry.providers.length === 0 ? <Empty>No successful requests in this window.</Empty> : null}
        {d?.telemetry.providers.length ? (
          <table>
            <thead>
              <tr>
                <th>Provider</th>
                <th>Requests</th>
                <th>Error rate</th>
                <th>p50</th>
                <th>p95</th>
                <th>p99</th>
                <th>Upstream p50</th>
              </tr>
            </thead>
            <tbody>
              {d.telemetry.providers.map((p) => (
                <tr key={p.providerId}>
                  <td>{p.provider}</td>
                  <td>{fmt.int(p.requests)}</td>
                  <td>{fmt.pct(p.errorRate)}</td>
                  <td>{fmt.ms(p.latencyMs.p50)}</td>
                  <td>{fmt.ms(p.latencyMs.p95)}</td>
                  <td>{fmt.ms(p.latencyMs.p99)}</td>
                  <td>{fmt.ms(p.upstreamMs.p50)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
      </Section>
    </>
  );
}

function BreakdownTable({ rows, group }: { rows: BreakdownRow[]; group: Group }) {
  const max = Math.max(...rows.map((r) => r.requests), 1);
  return (
    <table>
      <thead>
        <tr>
          <th>{group === 'connection' ? 'account' : group}</th>
          <th>Requests</th>
          <th>Errors</th>
          <th>Input</th>
          <th>Output</th>
          <th>Cache read</th>
          <th title="Share of input tokens read from the provider's prompt cache (what a combo's cache affinity buys)">Cached</th>
          <th>Reasoning</th>
          <th>Cost</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={String(r.key)}>
            <td>{r.name ?? r.key ?? '(none)'}</td>
            <td>
              <span className="bar" style={{ width: `${(r.requests / max) * 80}px` }} /> {fmt.int(r.requests)}
            </td>
            <td>{fmt.int(r.errors)}</td>
            <td>{fmt.int(r.tokens.input)}</td>
            <td>{fmt.int(r.tokens.output)}</td>
            <td>{fmt.int(r.tokens.cacheRead)}</td>
            <td>{r.tokens.input > 0 ? `${((r.tokens.cacheRead / r.tokens.input) * 100).toFixed(1)} %` : '-'}</td>
            <td>{fmt.int(r.tokens.reasoning)}</td>
            <td>{fmt.costTotal(r.costUsd, r.unpricedRequests)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A chart of one series per group, or what to do when the period has no traffic. */
function GroupChart({ title, x, chart, others, cost }: { title: string; x: number[]; chart: ChartSeries[]; others?: number; cost?: SeriesGroup[] }) {
  if (chart.length === 0) return <Empty>No traffic in this period for {title.split(' by ')[1]}s.</Empty>;
  return (
    <div>
      <TimeChart title={title} x={x} series={chart} height={160} />
      {cost ? <CostNote points={cost.flatMap((g) => g.points)} /> : null}
      {others ? <p className="muted small">{others} smaller groups not drawn (counted in the totals).</p> : null}
    </div>
  );
}

/**
 * A bucket's cost as a chart value: unknown (null, a gap in the line) when every request in it was unpriced,
 * never a $0 that looks like free traffic. A bucket with priced and unpriced requests plots what is priced;
 * `CostNote` says it is a lower bound.
 */
function costValue(p: Point): number | null {
  return p.unpricedRequests > 0 && p.unpricedRequests >= p.requests ? null : p.costUsd;
}

/** Under a cost chart: which buckets have unpriced requests, so a gap or a low point is read as unknown. */
function CostNote({ points }: { points: Point[] }) {
  const unpriced = points.filter((p) => p.unpricedRequests > 0);
  if (unpriced.length === 0) return null;
  const requests = unpriced.reduce((n, p) => n + p.unpricedRequests, 0);
  const gaps = unpriced.filter((p) => costValue(p) === null).length;
  return (
    <p className="muted small" data-unpriced-buckets={unpriced.length} data-unknown-buckets={gaps}>
      {fmt.int(requests)} {requests === 1 ? 'request has' : 'requests have'} no known price: {gaps > 0 ? `${gaps} ${gaps === 1 ? 'point is' : 'points are'} left blank (cost unknown)` : 'no point is blank'}
      {unpriced.length > gaps ? `, and ${unpriced.length - gaps} ${unpriced.length - gaps === 1 ? 'point counts' : 'points count'} only the priced requests (a lower bound)` : ''}. Set a price under Pricing.
    </p>
  );
}

/** Series per group (a key by its name, a combo by its name; rows without one under `none`). */
function buildGroups(groups: SeriesGroup[], metric: Metric, none: string): ChartSeries[] {
  const value = (p: Point) => (metric === 'requests' ? p.requests : metric === 'tokens' ? p.tokensIn + p.tokensOut : costValue(p));
  return groups.map((g, i) => ({ label: g.name ?? g.key ?? none, values: g.points.map(value), color: COLORS[i % COLORS.length]! }));
}

function build(points: Point[]) {
  const x = points.map((p) => Date.parse(p.t) / 1000);
  return {
    x,
    requests: [
      { label: 'requests', values: points.map((p) => p.requests), color: COLORS[0] },
      { label: 'errors', values: points.map((p) => p.errors), color: COLORS[1] },
    ],
    tokens: [
      { label: 'in', values: points.map((p) => p.tokensIn), color: COLORS[2] },
      { label: 'out', values: points.map((p) => p.tokensOut), color: COLORS[3] },
    ],
    cost: [{ label: 'USD', values: points.map(costValue), color: COLORS[4] }],
  };
}
