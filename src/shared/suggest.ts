/** "Did you mean ...?" for names a person types: settings, keys, providers, models (CLI and daemon). */

/** Edit distance (insert, delete, substitute, swap of neighbours). */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/** The candidates closest to `word` (case-insensitive; within a third of its length), best first. */
export function similar(word: string, candidates: Iterable<string>): string[] {
  const w = word.toLowerCase();
  const limit = Math.max(1, Math.floor(w.length / 3));
  const scored = [...candidates]
    .map((c) => ({ c, d: distance(w, c.toLowerCase()) }))
    .filter((x) => x.d <= limit || x.c.toLowerCase().startsWith(w))
    .sort((a, b) => a.d - b.d);
  return scored.map((x) => x.c);
}

/** `; did you mean 'x'?` or '' when nothing is close. */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const best = similar(word, candidates).slice(0, 2);
  return best.length ? ` Did you mean ${best.map((b) => `'${b}'`).join(' or ')}?` : '';
}
