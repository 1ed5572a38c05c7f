/**
 * Issue 31 item 5: prices set for a provider node's prefix before the fix were stored under the prefix and
 * never applied (usage rows carry the node's id). Migration 0026 moves them to the node's id; where the id
 * already has its own price for that model, that price (the one in effect) stays and the prefix row goes.
 * Real SQLite, the shipped migration files.
 */
import Database from 'better-sqlite3';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate, MIGRATIONS_DIR } from '../../src/daemon/store/migrate.js';
import { PricingStore } from '../../src/daemon/usage/pricing.js';
import { SqlPricingRepository } from '../../src/daemon/usage/pricing-sql.js';
import { SqliteDriver } from '../../src/daemon/store/sqlite-driver.js';

const dir = mkdtempSync(join(tmpdir(), 'router-price-migration-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NODE = '6f1c2a9e-0000-4000-8000-000000000001';

describe('migration 0026: price overrides under a node prefix', () => {
  it("move to the node's id (the id's own price wins), other providers' prices untouched", async () => {
    const before = join(dir, 'before');
    mkdirSync(before);
    for (const f of readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql') && f < '0026')) copyFileSync(join(MIGRATIONS_DIR, f), join(before, f));
    const db = new Database(':memory:');
    migrate(db, before);
    const now = new Date().toISOString();
    db.prepare("INSERT INTO provider_nodes (id, name, prefix, type, base_url, created_at, updated_at) VALUES (?, 'GPU box', 'gpu', 'openai-compatible', 'http://127.0.0.1:1/v1', ?, ?)").run(NODE, now, now);
    const put = db.prepare('INSERT INTO pricing_overrides (provider, model, input, output, cache_read, cache_write, reasoning, updated_at) VALUES (?, ?, ?, ?, NULL, NULL, NULL, ?)');
    put.run('gpu', 'llama-3-70b', 0.5, 0.7, now); // the old, dead row: moves
    put.run('gpu', 'qwen-72b', 9, 9, now); // dead too, but the node's id has its own price: dropped
    put.run(NODE, 'qwen-72b', 0.3, 0.4, now);
    put.run('openai', 'gpt-4o', 2, 8, now); // a built-in provider's price: untouched

    const { applied } = migrate(db, MIGRATIONS_DIR);
    expect(applied).toContain(26);
    const rows = db.prepare('SELECT provider, model, input, output FROM pricing_overrides ORDER BY provider, model').all();
    expect(rows).toEqual([
      { provider: NODE, model: 'llama-3-70b', input: 0.5, output: 0.7 },
      { provider: NODE, model: 'qwen-72b', input: 0.3, output: 0.4 },
      { provider: 'openai', model: 'gpt-4o', input: 2, output: 8 },
    ]);
    // The node's requests are priced with it now (rows carry the node's id).
    const pricing = await PricingStore.create(new SqlPricingRepository(new SqliteDriver(db)));
    expect(pricing.cost(NODE, 'llama-3-70b', { inputTokens: 1_000_000, outputTokens: 1_000_000 })).toMatchObject({ costUsd: 1.2, costSource: 'computed', priceVersion: 'override' });
    db.close();
  });
});
