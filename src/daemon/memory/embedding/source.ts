import type { EmbeddingSourceKind } from '../types.js';

/** A loaded embedding model: turns texts into unit-length vectors of a fixed width. */
export interface EmbeddingSource {
  kind: EmbeddingSourceKind;
  /** Model name as status and resolution report it. */
  model: string;
  dimensions: number;
  embed(texts: string[]): Promise<Float32Array[]>;
}

/** The outcome of trying to bring up one source. */
export type SourceProbe = { kind: EmbeddingSourceKind; available: true; source: EmbeddingSource; reason: string } | { kind: EmbeddingSourceKind; available: false; model: string | null; reason: string };

/** `source:model:dimensions`: the identity of the vectors a table holds. */
export function signatureOf(s: Pick<EmbeddingSource, 'kind' | 'model' | 'dimensions'>): string {
  return `${s.kind}:${s.model}:${s.dimensions}`;
}

/** Scales a vector to unit length in place (a zero vector stays zero). */
export function l2normalize(v: Float32Array): Float32Array {
  let sum = 0;
  for (const x of v) sum += x * x;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i]! /= norm;
  return v;
}

/** True when every component is zero (nothing known about the text; such vectors are not stored). */
export function isZero(v: Float32Array): boolean {
  for (const x of v) if (x !== 0) return false;
  return true;
}
