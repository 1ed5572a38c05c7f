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
});
