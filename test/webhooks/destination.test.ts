import { describe, expect, it } from 'vitest';
import {
  blockedAddressReason,
  checkDestinationUrl,
  DestinationError,
  resolvePublic,
  vettedLookup,
} from '../../src/daemon/webhooks/destination.js';
import { fakeResolver } from './helpers.js';
import { ALLOWED_URLS, BLOCKED_URLS } from './ssrf-table.js';

describe('public-destination check (static)', () => {
  it.each(BLOCKED_URLS)('blocks %s (%s)', (url) => {
    expect(() => checkDestinationUrl(url)).toThrow(DestinationError);
  });

  it.each(ALLOWED_URLS)('allows %s', (url) => {
    expect(() => checkDestinationUrl(url)).not.toThrow();
  });

  it('explains why', () => {
    expect(() => checkDestinationUrl('http://2130706433/')).toThrow(/127\.0\.0\.1.*loopback/);
    expect(() => checkDestinationUrl('https://a:b@example.com/')).toThrow(/credentials/);
    expect(() => checkDestinationUrl('ftp://example.com/')).toThrow(/scheme ftp/);
  });
});

describe('address ranges', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['169.254.1.1', 'linkLocal'],
    ['100.64.1.1', 'carrierGradeNat'],
    ['fc00::1', 'uniqueLocal'],
    ['fe80::1%eth0', 'linkLocal'],
    ['::ffff:192.168.0.1', 'private'],
    ['64:ff9b::1', 'rfc6052'],
    ['0.0.0.0', 'unspecified'],
  ])('%s is %s', (addr, reason) => {
    expect(blockedAddressReason(addr)).toBe(reason);
  });

  it('passes public unicast', () => {
    expect(blockedAddressReason('1.1.1.1')).toBeNull();
    expect(blockedAddressReason('2606:4700:4700::1111')).toBeNull();
  });
});

describe('resolution check', () => {
  it('checks every resolved address (one private among public is blocked)', async () => {
    const resolve = fakeResolver({ 'mixed.example.com': ['93.184.216.34', '127.0.0.1'], 'ok.example.com': ['93.184.216.34'] });
    await expect(resolvePublic('mixed.example.com', resolve)).rejects.toThrow(/resolves to 127\.0\.0\.1/);
    await expect(resolvePublic('ok.example.com', resolve)).resolves.toEqual([{ address: '93.184.216.34', family: 4 }]);
  });

  it('blocks a public-looking name that resolves to loopback, link-local or mapped loopback', async () => {
    const resolve = fakeResolver({ a: ['127.0.0.1'], b: ['169.254.169.254'], c: ['::ffff:127.0.0.1'] });
    for (const h of ['a', 'b', 'c']) await expect(resolvePublic(h, resolve)).rejects.toBeInstanceOf(DestinationError);
  });

  it('the connect-time lookup hands the socket only the addresses it checked', async () => {
    const resolve = fakeResolver({ 'pub.example.com': ['93.184.216.34', '2606:2800:220:1::1'], 'evil.example.com': ['10.0.0.5'] });
    const lookup = vettedLookup(resolve, () => true);
    const all = await new Promise<unknown>((res, rej) => lookup('pub.example.com', { all: true }, (e, a) => (e ? rej(e) : res(a))));
    expect(all).toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1::1', family: 6 },
    ]);
    const one = await new Promise<unknown[]>((res, rej) => lookup('pub.example.com', { family: 6 }, (e, a, f) => (e ? rej(e) : res([a, f]))));
    expect(one).toEqual(['2606:2800:220:1::1', 6]);
    const err = await new Promise<unknown>((res) => lookup('evil.example.com', { all: true }, (e) => res(e)));
    expect(err).toBeInstanceOf(DestinationError);
    // One resolution per connection: check and connect use the same answer, so nothing can re-bind between.
    expect(resolve.calls).toEqual(['pub.example.com', 'pub.example.com', 'evil.example.com']);
  });

  it('does not vet when private destinations are allowed', async () => {
    const lookup = vettedLookup(fakeResolver({ 'x.example.com': ['127.0.0.1'] }), () => false);
    const a = await new Promise<unknown>((res, rej) => lookup('x.example.com', { all: true }, (e, v) => (e ? rej(e) : res(v))));
    expect(a).toEqual([{ address: '127.0.0.1', family: 4 }]);
  });
});
