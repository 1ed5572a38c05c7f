import { randomUUID } from 'node:crypto';
import type { PresetOwner, PresetRepository } from './port.js';
import type { Preset, PresetBody } from './schema.js';

export type { PresetOwner } from './port.js';

/**
 * Playground presets over their storage port (SQLite or PostgreSQL). Every call names the owner: a caller
 * can neither read nor change another owner's preset (it looks like an unknown id). No snapshot: presets
 * are read by their management routes only, straight from storage, so every cluster node sees the same.
 */
export class PresetStore {
  constructor(private readonly repo: PresetRepository) {}

  /** The owner's presets, newest first. */
  list(owner: PresetOwner): Promise<Preset[]> {
    return this.repo.list(owner);
  }

  get(owner: PresetOwner, id: string): Promise<Preset | undefined> {
    return this.repo.get(owner, id);
  }

  async create(owner: PresetOwner, body: PresetBody): Promise<Preset> {
    const now = new Date().toISOString();
    const { name, model, system, messages, parameters, tags } = body;
    const preset: Preset = { id: randomUUID(), name, model, system, messages, parameters, tags, createdAt: now, updatedAt: now };
    await this.repo.insert(owner, preset);
    return preset;
  }

  /** Replaces every field but id and createdAt; undefined when the owner has no such preset. */
  async replace(owner: PresetOwner, id: string, body: PresetBody): Promise<Preset | undefined> {
    return (await this.repo.replace(owner, id, body, new Date().toISOString())) ? this.repo.get(owner, id) : undefined;
  }

  remove(owner: PresetOwner, id: string): Promise<boolean> {
    return this.repo.remove(owner, id);
  }
}
