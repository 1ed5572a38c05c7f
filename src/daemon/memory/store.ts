import type { StoredMemory } from './port.js';
import type { MemoryEntry } from './types.js';

export type { ListFilter, MemoryRepository, NewMemory, StoredMemory } from './port.js';
export { partitionOf, VEC_TABLE } from './vector-storage.js';

/** The API view of a stored memory (internal columns removed). */
export function publicMemory(m: StoredMemory): MemoryEntry {
  const { seq: _seq, embeddingSig: _e, externalSig: _x, ...rest } = m;
  return rest;
}
