/**
 * Issue 27 item 13: the settings schema carries, for every setting, its group, a description and its
 * default, and `GET /api/settings/schema` serves it (the dashboard's Settings page is drawn from it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

let router: RouterProcess;

beforeAll(async () => {
  router = await startRouter();
}, 60_000);

afterAll(async () => {
  await router?.stop();
});

interface Described {
  key: string;
  description: string;
  default: unknown;
  secret: boolean;
  secretFields?: string[];
  unit?: string;
  schema: Record<string, any>;
}

describe('GET /api/settings/schema', () => {
  it('describes every setting once, in a titled group, with a description, its JSON Schema and its default', async () => {
    const r = await router.manage('GET', '/api/settings/schema');
    expect(r.status).toBe(200);
    const groups = r.json.groups as Array<{ id: string; title: string; settings: Described[] }>;
    const settings = (await router.manage('GET', '/api/settings')).json as Record<string, unknown>;
    const described = groups.flatMap((g) => g.settings);
    expect(described.map((s) => s.key).sort()).toEqual(Object.keys(settings).sort());
    for (const g of groups) {
      expect(g.title.length, g.id).toBeGreaterThan(3);
      expect(g.settings.length, g.id).toBeGreaterThan(0);
    }
    for (const s of described) {
      expect(s.description.length, s.key).toBeGreaterThan(15);
      // A fresh daemon's values are the defaults.
      expect(s.default, s.key).toEqual(settings[s.key]);
      expect(s.schema.default, s.key).toBeUndefined();
      // Object settings describe their fields too (the page shows the text under each field).
      for (const [sub, prop] of Object.entries((s.schema.properties ?? {}) as Record<string, { description?: string }>)) {
        expect(prop.description?.length ?? 0, `${s.key}.${sub}`).toBeGreaterThan(10);
      }
    }
    const byKey = new Map(described.map((s) => [s.key, s]));
    expect(byKey.get('requireLogin')).toMatchObject({ default: true, schema: { type: 'boolean' } });
    expect(byKey.get('breakerCooldownMs')).toMatchObject({ default: 30_000, unit: 'ms', schema: { type: 'integer', minimum: 100, maximum: 3_600_000 } });
    expect(byKey.get('usageDurability')).toMatchObject({ default: 'batched', schema: { enum: ['batched', 'reply'] } });
    expect(byKey.get('telegramBotToken')).toMatchObject({ secret: true });
    expect(byKey.get('cloudSync')).toMatchObject({ secretFields: ['secret'], schema: { type: 'object' } });
    expect(Object.keys(byKey.get('compression')!.schema.properties)).toEqual(expect.arrayContaining(['enabled', 'toolOutputMaxTokens']));
  });

  it('is a management route', async () => {
    const res = await fetch(`${router.url}/api/settings/schema`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect([401, 403]).toContain(res.status);
  });
});
