import type { z } from 'zod';

/**
 * Settings a feature declares itself (one top-level key: an object or record of its own, with its schema,
 * default, group and description), so the settings store reads them without importing the feature.
 * Each feature's settings file exports its section and widens {@link FeatureSettings} with its type;
 * src/daemon/settings-sections.ts registers them all, in the order the Settings page lists them, before
 * the settings schema is first read.
 */
export interface SettingsSection<T = any> {
  key: string;
  /** The value's schema with its default (`.prefault` / `.default`) and `.meta({group, description})`. */
  schema: z.ZodType<T>;
  /** The value as replies show it (credentials masked). */
  mask?(value: T): T;
  /** A PATCH value that echoes a masked reply keeps the stored credential. */
  unmask?(patch: T, stored: T): T;
  /** How it is stored: one field sealed (`{ field }`), or the whole value sealed (`'whole'`). */
  sealed?: { field: string } | 'whole';
}

/** The feature settings by key; each feature's settings file adds its own (`declare module`). */
// biome-ignore lint/suspicious/noEmptyInterface: widened by declaration merging in each feature.
export interface FeatureSettings {}

const sections = new Map<string, SettingsSection>();
let read = false;

/** Adds a feature's section; refused after the settings schema was read (it would miss the section). */
export function registerSettings(section: SettingsSection): void {
  if (read) throw new Error(`settings section '${section.key}' registered after the settings schema was read`);
  if (sections.has(section.key)) throw new Error(`settings section '${section.key}' registered twice`);
  sections.set(section.key, section);
}

/** The registered sections, in registration order; reading them closes the registry. */
export function settingsSections(): readonly SettingsSection[] {
  // None at all: the program read settings without loading src/daemon/settings-sections.ts (a wiring mistake).
  if (sections.size === 0) throw new Error('no settings sections registered: import src/daemon/settings-sections.js before reading settings');
  read = true;
  return [...sections.values()];
}
