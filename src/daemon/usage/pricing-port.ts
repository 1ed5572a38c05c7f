import type { Price } from './pricing.js';

/** A user's price for one provider's model (`pricing_overrides`). */
export interface PriceOverride {
  provider: string;
  model: string;
  price: Price;
}

/**
 * The pricing module's storage port: the user's price overrides (`pricing_overrides`). The `PricingStore`
 * keeps the snapshot every reply is priced from; the port is touched at start, by PUT/DELETE
 * /api/pricing and by `reload()` (a cluster node told that another node changed a price). Implemented over
 * SQLite and PostgreSQL by `SqlPricingRepository` (test/usage/pricing-port.test.ts).
 */
export interface PricingRepository {
  /** Every override, in no particular order. */
  loadAll(): Promise<PriceOverride[]>;
  /** Inserts or replaces the override of `provider`/`model` (the price is replaced whole). */
  upsert(override: PriceOverride, updatedAt: string): Promise<void>;
  /** False when there was no such override. */
  remove(provider: string, model: string): Promise<boolean>;
}
