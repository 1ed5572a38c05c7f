import { z } from 'zod';
import { nestedSecrets, publicSettings, SETTING_GROUPS, type SettingMeta, settingsSchema, type Settings } from './store.js';

/** One setting as `GET /api/settings/schema` describes it: enough for a page to draw a typed control. */
export interface SettingDescription {
  key: string;
  description: string;
  /** The value it has when never set (secrets shown masked, as replies show them). */
  default: unknown;
  secret: boolean;
  /** Fields of an object setting that hold a credential (shown masked, like `cloudSync.secret`). */
  secretFields?: string[];
  unit?: string;
  /** JSON Schema of the value (type, minimum/maximum, enum, properties of an object setting). */
  schema: Record<string, unknown>;
}

export interface SettingsSchemaReply {
  groups: Array<{ id: string; title: string; settings: SettingDescription[] }>;
}

let cached: SettingsSchemaReply | undefined;

/**
 * Every setting by group, from the settings schema itself (zod metadata for group and description, JSON
 * Schema for type and bounds, the parsed empty document for defaults), so a new setting appears on the
 * Settings page by being declared. Built once: the schema does not change while the daemon runs.
 */
export function describeSettings(): SettingsSchemaReply {
  if (cached) return cached;
  const schemaOf = settingsSchema();
  const secrets = nestedSecrets();
  const json = z.toJSONSchema(schemaOf, { io: 'input', unrepresentable: 'any' }) as { properties: Record<string, Record<string, unknown>> };
  const defaults = publicSettings(schemaOf.parse({}) as Settings) as Record<string, unknown>;
  const groups = Object.entries(SETTING_GROUPS).map(([id, title]) => ({ id, title, settings: [] as SettingDescription[] }));
  for (const [key, field] of Object.entries(schemaOf.shape)) {
    const meta = (field as z.ZodType).meta() as SettingMeta | undefined;
    if (!meta) throw new Error(`setting ${key} has no group and description`);
    const { default: _ignored, description: _same, group: _g, secret: _s, unit: _u, ...schema } = json.properties[key] ?? {};
    groups
      .find((g) => g.id === meta.group)!
      .settings.push({ key, description: meta.description, default: defaults[key], secret: meta.secret === true, ...(secrets[key] ? { secretFields: [secrets[key]!] } : {}), ...(meta.unit ? { unit: meta.unit } : {}), schema });
  }
  cached = { groups: groups.filter((g) => g.settings.length > 0) };
  return cached;
}
