/** Stored and logged request headers: control characters stripped, 256 characters at most (relay rule 8). */
import { describe, expect, it } from 'vitest';
import { HEADER_VALUE_MAX, sanitizeHeaderValue } from '../../src/daemon/usage/sanitize.js';

describe('sanitizeHeaderValue', () => {
  it('keeps an ordinary value', () => {
    expect(sanitizeHeaderValue('OpenAI/Python 1.99.0')).toBe('OpenAI/Python 1.99.0');
    expect(sanitizeHeaderValue('203.0.113.7, 10.0.0.1')).toBe('203.0.113.7, 10.0.0.1');
  });

  it('strips CR/LF and other control characters (no forged log lines)', () => {
    expect(sanitizeHeaderValue('curl/8.0\r\n2026-01-01 INFO forged line')).toBe('curl/8.02026-01-01 INFO forged line');
    expect(sanitizeHeaderValue('a\u0000b\u0007c\u001bd\u007fe\u0085f\tg')).toBe('abcdefg');
    expect(sanitizeHeaderValue('left\u2028right\u202eevil')).toBe('leftrightevil');
  });

  it('caps the length at 256 characters', () => {
    expect(HEADER_VALUE_MAX).toBe(256);
    const long = 'x'.repeat(10_000);
    expect(sanitizeHeaderValue(long)).toBe('x'.repeat(256));
    // Control characters removed before the cap do not count.
    expect(sanitizeHeaderValue(`${'\n'.repeat(100)}${'y'.repeat(300)}`)).toBe('y'.repeat(256));
  });

  it('never cuts a surrogate pair in half', () => {
    const v = `${'a'.repeat(255)}😀tail`;
    const out = sanitizeHeaderValue(v)!;
    expect(out).toBe('a'.repeat(255));
    expect(out.length).toBeLessThanOrEqual(256);
  });

  it('joins a repeated header and maps empty to null', () => {
    expect(sanitizeHeaderValue(['1.1.1.1', '2.2.2.2'])).toBe('1.1.1.1, 2.2.2.2');
    expect(sanitizeHeaderValue(undefined)).toBeNull();
    expect(sanitizeHeaderValue(null)).toBeNull();
    expect(sanitizeHeaderValue('\r\n\t ')).toBeNull();
  });

  // The relay route's log line uses the same function (spec relay rule 8); the table it had of its own.
  const table: Array<[string, string | null | undefined, string | null]> = [
    ['CR LF (log line forging) removed', 'ua\r\n{"level":"error"}', 'ua{"level":"error"}'],
    ['NUL, TAB, ESC (C0) removed', 'a\u0000b\tc\u001b[31md', 'abc[31md'],
    ['DEL removed', 'a\u007fb', 'ab'],
    ['C1 controls removed (U+0080, U+0085 NEL, U+009B CSI, U+009F)', 'a\u0080b\u0085c\u009bd\u009fe', 'abcde'],
    ['line/paragraph separators and bidi overrides removed', 'a\u2028b\u2029c\u202ed\u2066e', 'abcde'],
    ['printable non-ASCII kept (U+00A0 and above)', 'caf\u00e9 \u00a0\u4e2d\u6587 \u{1f600}', 'caf\u00e9 \u00a0\u4e2d\u6587 \u{1f600}'],
    ['only control characters -> null', '\r\n\t\u0000', null],
    ['256 characters kept whole', 'x'.repeat(256), 'x'.repeat(256)],
    ['257 characters capped at 256', 'x'.repeat(257), 'x'.repeat(256)],
    ['a surrogate pair is never cut in half', 'x'.repeat(255) + '\u{1f600}z', 'x'.repeat(255)],
  ];
  it.each(table)('%s', (_name, input, want) => {
    expect(sanitizeHeaderValue(input)).toBe(want);
  });

  it('accepts another cap; huge values cost the cap, not their size', () => {
    expect(sanitizeHeaderValue('abcdef', 3)).toBe('abc');
    expect(sanitizeHeaderValue('a'.repeat(20_000))!.length).toBe(256);
  });
});
