/** A unified diff of two texts (line based, three lines of context), small and dependency-free. */

type Op = { kind: ' ' | '-' | '+'; line: string };

/** Longest-common-subsequence edit script; inputs beyond a few thousand lines degrade to replace-all. */
function editScript(a: string[], b: string[]): Op[] {
  if (a.length * b.length > 4_000_000) return [...a.map((line) => ({ kind: '-' as const, line })), ...b.map((line) => ({ kind: '+' as const, line }))];
  const n = a.length;
  const m = b.length;
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      ops.push({ kind: ' ', line: a[i]! });
      i++;
      j++;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) ops.push({ kind: '-', line: a[i++]! });
    else ops.push({ kind: '+', line: b[j++]! });
  }
  while (i < n) ops.push({ kind: '-', line: a[i++]! });
  while (j < m) ops.push({ kind: '+', line: b[j++]! });
  return ops;
}

const lines = (text: string) => (text === '' ? [] : text.replace(/\n$/, '').split('\n'));

/**
 * `--- label` / `+++ label` and hunks with three lines of context; empty when the texts are equal.
 * `before === null` means the file does not exist yet.
 */
export function unifiedDiff(before: string | null, after: string | null, label: string, context = 3): string {
  if (before === after) return '';
  const ops = editScript(lines(before ?? ''), lines(after ?? ''));
  // git's a/ and b/ prefixes; an absolute path keeps one slash (`a/home/me/...`, not `a//home/me/...`).
  const path = label.replace(/^\/+/, '');
  const out = [`--- ${before === null ? '/dev/null' : `a/${path}`}`, `+++ ${after === null ? '/dev/null' : `b/${path}`}`];
  let k = 0;
  while (k < ops.length) {
    if (ops[k]!.kind === ' ') {
      k++;
      continue;
    }
    // A hunk: from `context` lines before this change to `context` lines after the last change near it.
    let start = Math.max(0, k - context);
    let end = k;
    while (end < ops.length) {
      if (ops[end]!.kind !== ' ') {
        end++;
        continue;
      }
      let run = 0;
      while (end + run < ops.length && ops[end + run]!.kind === ' ') run++;
      if (end + run >= ops.length || run > context * 2) {
        end = Math.min(ops.length, end + context);
        break;
      }
      end += run;
    }
    let aLine = 1;
    let bLine = 1;
    for (let x = 0; x < start; x++) {
      if (ops[x]!.kind !== '+') aLine++;
      if (ops[x]!.kind !== '-') bLine++;
    }
    const hunk = ops.slice(start, end);
    const aCount = hunk.filter((o) => o.kind !== '+').length;
    const bCount = hunk.filter((o) => o.kind !== '-').length;
    out.push(`@@ -${aCount ? aLine : aLine - 1},${aCount} +${bCount ? bLine : bLine - 1},${bCount} @@`);
    for (const o of hunk) out.push(`${o.kind}${o.line}`);
    k = end;
    start = end;
  }
  return out.join('\n');
}
