import { describe, expect, it } from 'vitest';
import '../../src/daemon/settings-sections.js';
import { FEATURE_SETTINGS } from '../../src/daemon/settings-sections.js';
import { registerSettings, settingsSections } from '../../src/daemon/settings/registry.js';
import { settingsSchema } from '../../src/daemon/settings/store.js';
import { z } from 'zod';

describe('settings sections', () => {
  it('the features declare their sections; the settings schema holds each after the core settings, in order', () => {
    const keys = Object.keys(settingsSchema().shape);
    expect(keys.slice(-FEATURE_SETTINGS.length)).toEqual(['compression', 'outboundProxy', 'cloudSync', 'agents', 'oauthEndpoints']);
    expect(settingsSections().map((s) => s.key)).toEqual(FEATURE_SETTINGS.map((s) => s.key));
  });

  it('a section registered after the schema was read is refused, not silently left out', () => {
    settingsSchema();
    expect(() => registerSettings({ key: 'late', schema: z.object({}).prefault({}) })).toThrow(/registered after the settings schema was read/);
  });
});
