import type { Registry } from 'prom-client';

/**
 * Metric families whose hot path is a property increment. prom-client's own Counter and Histogram hash
 * their label set on every call (a few microseconds per request across a dozen families); here a caller
 * looks a cell up once per label combination, keeps it, and later adds to it directly. prom-client's
 * registry still writes the exposition text (escaping, `le` buckets, `+Inf`), from `get()` at scrape time.
 */

type Labels = Record<string, string>;

/** What prom-client's registry reads from a metric (`get()`), the shape its own metrics return. */
interface Exposition {
  name: string;
  help: string;
  type: string;
  values: Array<{ labels: Record<string, string | number>; value: number; metricName?: string }>;
  aggregator: 'sum';
}

/** One counter or gauge value of a label combination. */
export interface Cell {
  readonly labels: Labels;
  value: number;
}

/** One histogram of a label combination: per-bucket counts (not cumulative), sum and count. */
export interface HistogramCell {
  readonly labels: Labels;
  readonly bounds: readonly number[];
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

/** Adds one observation; the `+Inf` bucket is the last slot. */
export function observe(cell: HistogramCell, v: number): void {
  const b = cell.bounds;
  let i = 0;
  while (i < b.length && v > b[i]!) i++;
  cell.counts[i]!++;
  cell.sum += v;
  cell.count++;
}

abstract class Family<C extends { labels: Labels }> {
  protected readonly cells = new Map<string, C>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}

  /** The cell of one label combination (values in `labelNames` order), created on first use. */
  cell(...values: string[]): C {
    const key = values.join('\u0000');
    let c = this.cells.get(key);
    if (!c) {
      const labels: Labels = {};
      this.labelNames.forEach((n, i) => (labels[n] = values[i] ?? ''));
      c = this.create(labels);
      this.cells.set(key, c);
    }
    return c;
  }

  /** Drops every cell (gauges rebuilt at scrape time). */
  clear(): void {
    this.cells.clear();
  }

  /** Registers this family with a prom-client registry (which writes its text). */
  register(registry: Registry): this {
    registry.registerMetric(this as never);
    return this;
  }

  protected abstract create(labels: Labels): C;
}

/** A counter (`type` counter) or gauge family of plain cells. */
export class ValueFamily extends Family<Cell> {
  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    readonly type: 'counter' | 'gauge',
    /** Runs before each scrape (gauges read from their source). */
    private readonly refresh?: (f: ValueFamily) => void,
  ) {
    super(name, help, labelNames);
  }

  protected create(labels: Labels): Cell {
    return { labels, value: 0 };
  }

  /** prom-client's metric interface: the values to write. */
  async get(): Promise<Exposition> {
    this.refresh?.(this);
    const values: Exposition['values'] = [];
    for (const c of this.cells.values()) values.push({ labels: c.labels, value: c.value });
    return { name: this.name, help: this.help, type: this.type, values, aggregator: 'sum' };
  }
}

/** A histogram family with fixed bucket bounds (seconds). */
export class HistogramFamily extends Family<HistogramCell> {
  readonly type = 'histogram';

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    readonly bounds: readonly number[],
  ) {
    super(name, help, labelNames);
  }

  protected create(labels: Labels): HistogramCell {
    return { labels, bounds: this.bounds, counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 };
  }

  async get(): Promise<Exposition> {
    const values: Exposition['values'] = [];
    for (const c of this.cells.values()) {
      let cumulative = 0;
      for (let i = 0; i <= this.bounds.length; i++) {
        cumulative += c.counts[i]!;
        const le = i < this.bounds.length ? this.bounds[i]! : '+Inf';
        values.push({ metricName: `${this.name}_bucket`, labels: { ...c.labels, le }, value: cumulative });
      }
      values.push({ metricName: `${this.name}_sum`, labels: c.labels, value: c.sum });
      values.push({ metricName: `${this.name}_count`, labels: c.labels, value: c.count });
    }
    return { name: this.name, help: this.help, type: 'histogram', values, aggregator: 'sum' };
  }
}
