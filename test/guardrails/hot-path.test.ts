import { describe, expect, it } from 'vitest';
import { compressionStage } from '../../src/daemon/compression/stage.js';
import { compressionSettingsSchema } from '../../src/daemon/compression/settings.js';
import { guardrailStage } from '../../src/daemon/guardrails/stage.js';
import { SqlGuardrailRepository } from '../../src/daemon/guardrails/sql-repository.js';
import { GuardrailService } from '../../src/daemon/guardrails/store.js';
import type { StageContext } from '../../src/daemon/proxy/stages.js';
import { openDatabase } from '../../src/daemon/store/db.js';
import { migrate } from '../../src/daemon/store/migrate.js';
import { SqliteDriver } from '../../src/daemon/store/sqlite-driver.js';

function service() {
  const db = openDatabase(':memory:');
  migrate(db);
  db.prepare("INSERT INTO api_keys (id, name, key_hash, masked_key, created_at, updated_at) VALUES ('k1', 'k', 'h1', 'm', 'now', 'now')").run();
  return GuardrailService.create(new SqlGuardrailRepository(new SqliteDriver(db)));
}

function ctx(keyId: string | undefined, raw: Record<string, unknown>, compression: Record<string, unknown>, contextLength?: number): StageContext {
  const models = [{ id: 'm1', contextLength }];
  return {
    services: { settings: { get: () => ({ compression: compressionSettingsSchema.parse(compression) }) }, providers: { models: () => models } },
    auth: { via: 'api-key', key: keyId ? { id: keyId } : undefined, loopback: true, remoteAddress: '127.0.0.1' },
    call: { clientFormat: 'openai-chat', raw, model: 'p/m1', stream: false, endpoint: '/v1/chat/completions' },
    target: { provider: { id: 'p' }, model: 'm1', publicModel: 'p/m1' },
    traceId: 't',
    headers: {},
    notes: {},
  } as unknown as StageContext;
}

const small = { model: 'p/m1', messages: [{ role: 'user', content: 'hi' }] };

describe('hot path: stages stay out of requests they need not see', () => {
  it('guardrails: wants is false with everything off, true once a guardrail is on (globally or for the key only)', async () => {
    const g = await service();
    const stage = guardrailStage(g);
    expect(stage.wants(ctx('k1', small, {}))).toBe(false);
    await g.setOverride('k1', { secrets: { mode: 'log' } });
    expect(stage.wants(ctx('k1', small, {}))).toBe(true);
    expect(stage.wants(ctx('k2', small, {}))).toBe(false);
    expect(stage.wants(ctx(undefined, small, {}))).toBe(false);
    await g.patch({ pii: { mode: 'redact' } });
    expect(stage.wants(ctx('k2', small, {}))).toBe(true);
    await g.setOverride('k1', { pii: { mode: 'off' }, secrets: { mode: 'off' } });
    expect(stage.wants(ctx('k1', small, {}))).toBe(false);
  });

  it('compression: off, unknown context, or a body that cannot overflow -> false, without a tokenizer', () => {
    const stage = compressionStage();
    const big = { model: 'p/m1', messages: [{ role: 'user', content: 'x '.repeat(2000) }] };
    expect(stage.wants(ctx(undefined, big, { enabled: false }, 1000))).toBe(false);
    expect(stage.wants(ctx(undefined, big, { enabled: true }, undefined))).toBe(false);
    expect(stage.wants(ctx(undefined, small, { enabled: true }, 1000))).toBe(false);
    expect(stage.wants(ctx(undefined, big, { enabled: true }, 1000))).toBe(true);
    expect(stage.wants(ctx(undefined, big, { enabled: true }, 128_000))).toBe(false);
  });
});
