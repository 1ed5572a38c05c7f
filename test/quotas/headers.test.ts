/** Spec proxy rule 8: relay forwarded-for and user-agent values are stripped of control characters and capped at 256. */
import { describe, expect, it } from 'vitest';
import { FORWARDED_HEADER_MAX, sanitizeHeaderValue } from '../../src/daemon/quotas/headers.js';

describe('sanitizeHeaderValue', () => {
  const table: Array<[string, string | null | undefined, string]> = [
    ['plain value unchanged', 'curl/8.5.0', 'curl/8.5.0'],
    ['forwarded list unchanged', '203.0.113.7, 10.0.0.1', '203.0.113.7, 10.0.0.1'],
    ['CR LF (log line forging) removed', 'ua\r\n{"level":"error"}', 'ua{"level":"error"}'],
    ['NUL, TAB, ESC (C0) removed', 'a\u0000b\tc\u001b[31md', 'abc[31md'],
    ['DEL removed', 'a\u007fb', 'ab'],
    ['C1 controls removed (U+0080, U+0085 NEL, U+009B CSI, U+009F)', 'a\u0080b\u0085c\u009bd\u009fe', 'abcde'],
    ['line/paragraph separators and bidi overrides removed', 'a\u2028b\u2029c\u202ed\u2066e', 'abcde'],
    ['printable non-ASCII kept (U+00A0 and above)', 'caf\u00e9 \u00a0\u4e2d\u6587 \u{1f600}', 'caf\u00e9 \u00a0\u4e2d\u6587 \u{1f600}'],
    ['only control characters -> empty', '\r\n\t\u0000', ''],
    ['null -> empty', null, ''],
    ['undefined -> empty', undefined, ''],
    ['256 characters kept whole', 'x'.repeat(256), 'x'.repeat(256)],
    ['257 characters capped at 256', 'x'.repeat(257), 'x'.repeat(256)],
    ['control characters do not count towards the cap', '\r\n'.repeat(100) + 'y'.repeat(256), 'y'.repeat(256)],
    ['cap counts code points: a surrogate pair is never cut', 'x'.repeat(255) + '\u{1f600}z', 'x'.repeat(255) + '\u{1f600}'],
  ];
  it.each(table)('%s', (_name, input, want) => {
    expect(sanitizeHeaderValue(input)).toBe(want);
  });

  it('caps at 256 by default and accepts another cap', () => {
    expect(FORWARDED_HEADER_MAX).toBe(256);
    expect(sanitizeHeaderValue('abcdef', 3)).toBe('abc');
    expect(sanitizeHeaderValue('abc', 0)).toBe('');
    expect(sanitizeHeaderValue('a'.repeat(20_000)).length).toBe(256);
  });
});
