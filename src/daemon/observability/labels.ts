/** The label value every name beyond a cap is counted under. */
export const OTHER = 'other';

/**
 * A label whose values come from traffic (models, combos, providers): the first `limit` distinct values
 * are kept as they are, every later one is counted under "other". Prometheus keeps one series per label
 * combination for ever, so a client naming 10,000 models must not create 10,000 series.
 */
export class CappedLabel {
  private readonly seen = new Set<string>();

  constructor(readonly limit: number) {}

  /** The label value for `value`: itself while there is room (or it was admitted before), else "other". */
  of(value: string): string {
    if (this.seen.has(value)) return value;
    if (this.seen.size >= this.limit) return OTHER;
    this.seen.add(value);
    return value;
  }

  /** The label value for `value` without admitting it: itself when admitted before, else "other". */
  peek(value: string): string {
    return this.seen.has(value) ? value : OTHER;
  }

  /** Distinct values admitted so far. */
  get size(): number {
    return this.seen.size;
  }
}

/** `2xx`, `4xx`, `5xx`... of an HTTP status (0 and nonsense: `error`). */
export function statusClass(status: number): string {
  return status >= 100 && status < 600 ? `${Math.floor(status / 100)}xx` : 'error';
}
