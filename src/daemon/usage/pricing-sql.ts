import type { SqlDriver } from '../store/driver.js';
import type { SqliteDriver } from '../store/sqlite-driver.js';
import { unitRates, type Price, type UnitRates } from './pricing.js';
import type { PriceOverride, PricingRepository } from './pricing-port.js';

interface Row {
  provider: string;
  model: string;
  input: number;
  output: number;
  cache_read: number | null;
  cache_write: number | null;
  reasoning: number | null;
  /** JSON object of the unit rates (migration 0020), or null. */
  units: string | null;
}

const LOAD = 'SELECT provider, model, input, output, cache_read, cache_write, reasoning, units FROM pricing_overrides';

function fromRow(r: Row): PriceOverride {
  const price: Price = { input: r.input, output: r.output };
  if (r.cache_read !== null) price.cacheRead = r.cache_read;
  if (r.cache_write !== null) price.cacheWrite = r.cache_write;
  if (r.reasoning !== null) price.reasoning = r.reasoning;
  if (r.units !== null) Object.assign(price, unitRates(JSON.parse(r.units) as UnitRates));
  return { provider: r.provider, model: r.model, price };
}

function unitsJson(price: Price): string | null {
  const units = unitRates(price);
  return Object.keys(units).length ? JSON.stringify(units) : null;
}

/** Loads every override synchronously from the embedded file (a `UsageService` built without a pricing store). */
export function loadPriceOverridesSync(driver: SqliteDriver): PriceOverride[] {
  return driver.querySync<Row>(LOAD).map(fromRow);
}

/** The pricing port over the driver seam: one SQL text for SQLite and PostgreSQL (table pricing_overrides). */
export class SqlPricingRepository implements PricingRepository {
  constructor(private readonly driver: SqlDriver) {}

  async loadAll(): Promise<PriceOverride[]> {
    return (await this.driver.query<Row>(LOAD)).map(fromRow);
  }

  async upsert({ provider, model, price }: PriceOverride, updatedAt: string): Promise<void> {
    await this.driver.run(
      `INSERT INTO pricing_overrides (provider, model, input, output, cache_read, cache_write, reasoning, units, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (provider, model) DO UPDATE SET input = excluded.input, output = excluded.output,
         cache_read = excluded.cache_read, cache_write = excluded.cache_write, reasoning = excluded.reasoning,
         units = excluded.units, updated_at = excluded.updated_at`,
      [provider, model, price.input, price.output, price.cacheRead ?? null, price.cacheWrite ?? null, price.reasoning ?? null, unitsJson(price), updatedAt],
    );
  }

  async remove(provider: string, model: string): Promise<boolean> {
    const { changes } = await this.driver.run('DELETE FROM pricing_overrides WHERE provider = ? AND model = ?', [provider, model]);
    return changes > 0;
  }
}
