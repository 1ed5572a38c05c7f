/**
 * A small seeded pseudo-random generator (mulberry32). Strategies take `random: () => number` so tests
 * and reproducible runs can pass one of these instead of `Math.random`.
 */

/** Returns a generator of floats in [0, 1) fully determined by `seed` (any 32-bit integer). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
