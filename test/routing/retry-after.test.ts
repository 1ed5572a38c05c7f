import { describe, expect, it } from 'vitest';
import {
  headerValue,
  humanizeSeconds,
  MAX_RETRY_SECONDS,
  parseRetryAfter,
  parseRetryHintFromText,
  retryHintSeconds,
  tryParseRetryAfter,
} from '../../src/daemon/routing/retry-after.js';

const NOW = Date.UTC(2025, 0, 15, 12, 0, 0); // 1736942400000
const NOW_S = NOW / 1000;

describe('parseRetryAfter', () => {
  it.each<[string, string | number | undefined | null, number]>([
    ['integer string', '30', 30],
    ['integer number', 30, 30],
    ['decimal rounds up', '1.2', 2],
    ['decimal number rounds up', 2.0001, 3],
    ['whitespace around', '  7 ', 7],
    ['zero gives the minimum', '0', 1],
    ['negative gives the minimum', '-5', 1],
    ['negative number', -100, 1],
    ['just below the epoch threshold is still seconds', 999_999_999, 999_999_999],
    ['epoch seconds 90 s ahead', String(NOW_S + 90), 90],
    ['epoch seconds number', NOW_S + 3600, 3600],
    ['epoch seconds in the past', NOW_S - 10, 1],
    ['epoch milliseconds 90.5 s ahead rounds up', String(NOW + 90_500), 91],
    ['epoch milliseconds number', NOW + 5000, 5],
    ['epoch milliseconds in the past', NOW - 5000, 1],
    ['HTTP-date in the future', 'Wed, 15 Jan 2025 12:02:05 GMT', 125],
    ['HTTP-date in the past', 'Wed, 15 Jan 2025 11:00:00 GMT', 1],
    ['RFC 850 date', 'Wednesday, 15-Jan-25 12:01:00 GMT', 60],
    ['asctime date (GMT by definition)', 'Wed Jan 15 12:00:30 2025', 30],
    ['ISO timestamp', '2025-01-15T12:10:00Z', 600],
    ['ISO timestamp with offset', '2025-01-15T13:00:30+01:00', 30],
    ['garbage', 'soon', 1],
    ['garbage V8 would parse as a date', 'foo 1', 1],
    ['number with junk', '12abc', 1],
    ['empty string', '', 1],
    ['undefined', undefined, 1],
    ['null', null, 1],
    ['NaN', Number.NaN, 1],
    ['Infinity', Number.POSITIVE_INFINITY, 1],
  ])('%s', (_name, value, expected) => {
    expect(parseRetryAfter(value, NOW)).toBe(expected);
  });

  it('tryParseRetryAfter tells unreadable values apart from readable ones', () => {
    expect(tryParseRetryAfter('garbage', NOW)).toBeUndefined();
    expect(tryParseRetryAfter(undefined, NOW)).toBeUndefined();
    expect(tryParseRetryAfter('0', NOW)).toBe(1);
  });
});

describe('parseRetryHintFromText', () => {
  it.each<[string, string | undefined, number | undefined]>([
    ['full h/m/s', 'Quota exceeded. Your quota will reset after 2h7m23s.', 2 * 3600 + 7 * 60 + 23],
    ['minutes only', 'reset after 45m', 2700],
    ['seconds only', 'reset after 30s', 30],
    ['hours only', 'reset after 3h', 10_800],
    ['hours and seconds', 'reset after 1h5s', 3605],
    ['minutes and seconds', 'reset after 2m5s', 125],
    ['spaces between parts', 'reset after 2h 7m 23s', 7643],
    ['resets after', 'the limit resets after 10s', 10],
    ['retry after seconds', 'Rate limited, please retry after 12s', 12],
    ['case-insensitive', 'RETRY AFTER 12S', 12],
    ['decimal seconds round up', 'retry after 1.5s', 2],
    ['long unit words', 'Please retry after 20 seconds.', 20],
    ['long minutes', 'reset after 5 minutes', 300],
    ['inside JSON', '{"error":{"message":"Too many requests, retry after 7s"}}', 7],
    ['milliseconds are not minutes', 'retry after 500ms', undefined],
    ['no unit', 'retry after 30', undefined],
    ['phrase without a duration, then a real one', 'retry after the reset; reset after 9s', 9],
    ['no hint', 'Internal server error', undefined],
    ['empty', '', undefined],
    ['undefined', undefined, undefined],
  ])('%s', (_name, text, expected) => {
    expect(parseRetryHintFromText(text)).toBe(expected);
  });
});

describe('usage-limit reset fields (Codex usage_limit_reached)', () => {
  const limit = (fields: string) => `{"error":{"type":"usage_limit_reached","message":"The usage limit has been reached","plan_type":"plus",${fields}}}`;

  it('reads resets_in_seconds', () => {
    expect(parseRetryHintFromText(limit('"resets_in_seconds":5400'), NOW)).toBe(5400);
    expect(retryHintSeconds({ headers: {}, bodyText: limit('"resets_in_seconds":5400') }, NOW)).toBe(5400);
  });

  it('reads resets_at as an epoch time', () => {
    expect(parseRetryHintFromText(limit(`"resets_at":${Math.floor(NOW / 1000) + 600}`), NOW)).toBe(600);
  });
});

describe('retryHintSeconds', () => {
  it('prefers the Retry-After header over the body text', () => {
    expect(retryHintSeconds({ headers: { 'Retry-After': '5' }, bodyText: 'retry after 60s' }, NOW)).toBe(5);
  });

  it('reads a Headers object', () => {
    expect(retryHintSeconds({ headers: new Headers({ 'retry-after': '8' }) }, NOW)).toBe(8);
  });

  it('falls back to the body text when the header is missing or unreadable', () => {
    expect(retryHintSeconds({ headers: {}, bodyText: 'reset after 2m' }, NOW)).toBe(120);
    expect(retryHintSeconds({ headers: { 'retry-after': 'later' }, bodyText: 'reset after 2m' }, NOW)).toBe(120);
  });

  it('falls back to 1 second when nothing is readable', () => {
    expect(retryHintSeconds({}, NOW)).toBe(1);
    expect(retryHintSeconds({ headers: null, bodyText: 'nope' }, NOW)).toBe(1);
  });

  it('caps at 24 hours from the header and from the text', () => {
    expect(retryHintSeconds({ headers: { 'retry-after': '100000' } }, NOW)).toBe(MAX_RETRY_SECONDS);
    expect(retryHintSeconds({ bodyText: 'reset after 30h' }, NOW)).toBe(86_400);
    expect(retryHintSeconds({ bodyText: 'reset after 24h' }, NOW)).toBe(86_400);
    expect(retryHintSeconds({ bodyText: 'reset after 23h59m59s' }, NOW)).toBe(86_399);
  });

  it('gives at least 1 second for a zero hint', () => {
    expect(retryHintSeconds({ bodyText: 'retry after 0s' }, NOW)).toBe(1);
  });
});

describe('headerValue', () => {
  it('is case-insensitive and takes the first of repeated values', () => {
    expect(headerValue({ 'RETRY-AFTER': ['3', '4'] }, 'retry-after')).toBe('3');
    expect(headerValue({ 'retry-after': 9 }, 'Retry-After')).toBe('9');
    expect(headerValue(undefined, 'retry-after')).toBeUndefined();
  });
});

describe('humanizeSeconds', () => {
  it.each<[number, string]>([
    [7643, '2h 7m 23s'],
    [125, '2m 5s'],
    [45, '45s'],
    [120, '2m'],
    [3600, '1h'],
    [3605, '1h 5s'],
    [0, '0s'],
    [-3, '0s'],
    [1.2, '2s'],
    [86_400, '24h'],
  ])('%d -> %s', (seconds, expected) => {
    expect(humanizeSeconds(seconds)).toBe(expected);
  });
});
