import { describe, expect, it } from 'vitest';
import { maskConnectionUrl, maskUrlsIn } from '../../src/shared/mask-url.js';

describe('maskConnectionUrl', () => {
  it('masks the password of PostgreSQL and Redis URLs and keeps the rest readable', () => {
    expect(maskConnectionUrl('postgres://alice:s3cr%40t@db:5432/router?sslmode=require')).toBe('postgres://alice:****@db:5432/router?sslmode=require');
    expect(maskConnectionUrl('redis://:pw@127.0.0.1:6379/0')).toBe('redis://:****@127.0.0.1:6379/0');
    expect(maskConnectionUrl('rediss://default:abc@cache.example')).toBe('rediss://default:****@cache.example');
  });
  it('masks password query parameters, leaves URLs without a password alone', () => {
    expect(maskConnectionUrl('postgresql://u:p@h/d?password=zz&sslpassword=yy')).toBe('postgresql://u:****@h/d?password=****&sslpassword=****');
    expect(maskConnectionUrl('postgres://alice@db/x')).toBe('postgres://alice@db/x');
  });
  it('a string that is not a URL is masked whole after its scheme', () => {
    expect(maskConnectionUrl('postgres://al ice:pw@[bad')).toBe('postgres://****');
    expect(maskConnectionUrl('nonsense')).toBe('****');
  });
  it('masks URLs with credentials inside a message', () => {
    expect(maskUrlsIn('cannot reach postgres://a:b@h:1/d (ECONNREFUSED); see http://x/y')).toBe('cannot reach postgres://a:****@h:1/d (ECONNREFUSED); see http://x/y');
  });
});
