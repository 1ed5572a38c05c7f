import type { Preset, PresetBody } from './schema.js';

/** Who a preset belongs to: an API key id, or null for the dashboard (session callers). */
export type PresetOwner = string | null;

/**
 * The playground presets' storage port. Presets are read only by their management routes (never by the
 * request path), so the store keeps no snapshot: every call goes to storage, and every node of a cluster
 * reads the same rows. Every call names the owner: another owner's preset looks like an unknown id.
 * Implemented over SQLite and PostgreSQL by `SqlPresetRepository` (test/playground/port.test.ts).
 */
export interface PresetRepository {
  /** The owner's presets, newest first (insertion order breaks ties within one millisecond). */
  list(owner: PresetOwner): Promise<Preset[]>;
  get(owner: PresetOwner, id: string): Promise<Preset | undefined>;
  insert(owner: PresetOwner, preset: Preset): Promise<void>;
  /** Replaces every field but id and createdAt; false when the owner has no such preset. */
  replace(owner: PresetOwner, id: string, body: PresetBody, updatedAt: string): Promise<boolean>;
  /** False when the owner had no such preset. */
  remove(owner: PresetOwner, id: string): Promise<boolean>;
}
