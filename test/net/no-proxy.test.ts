import { describe, expect, it } from 'vitest';
import { isLoopbackHost, noProxyMatcher } from '../../src/daemon/net/no-proxy.js';

describe('NO_PROXY-style exclusions', () => {
  const m = noProxyMatcher(['example.com, .corp.test', '*.svc.local 10.0.0.0/8', '192.168.1.5:8080', '[::1]', 'api.host:443']);
  it.each([
    ['example.com', 443, true],
    ['api.example.com', 443, true],
    ['notexample.com', 443, false],
    ['x.corp.test', 80, true],
    ['corp.test', 80, true],
    ['a.svc.local', 80, true],
    ['10.2.3.4', 443, true],
    ['11.2.3.4', 443, false],
    ['192.168.1.5', 8080, true],
    ['192.168.1.5', 80, false],
    ['::1', 80, true],
    ['api.host', 443, true],
    ['api.host', 80, false],
    ['EXAMPLE.COM.', 443, true],
  ] as const)('%s:%d -> %s', (host, port, excluded) => {
    expect(m(host, port)).toBe(excluded);
  });
  it('* excludes everything; an empty list nothing', () => {
    expect(noProxyMatcher(['*'])('anything.test', 1)).toBe(true);
    expect(noProxyMatcher([])('anything.test', 1)).toBe(false);
  });
  it('knows loopback', () => {
    for (const h of ['localhost', '127.0.0.1', '127.9.9.9', '[::1]', '::ffff:127.0.0.1']) expect(isLoopbackHost(h)).toBe(true);
    for (const h of ['10.0.0.1', 'example.com']) expect(isLoopbackHost(h)).toBe(false);
  });
});
