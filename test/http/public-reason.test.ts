/**
 * `publicReason`: what a client may read of a failure. Router's own messages pass (sanitized); system,
 * network, TLS and SQLite failures are named in plain words; any other exception text (a library's or a
 * driver's message, which may name hosts, users or internals) becomes the fallback.
 */
import { describe, expect, it } from 'vitest';
import { RouterError, publicReason } from '../../src/daemon/http/errors.js';
import { AttemptError } from '../../src/daemon/proxy/upstream-error.js';
import { SecretError } from '../../src/daemon/store/secrets.js';
import { CodecError } from '../../src/daemon/translate/errors.js';

describe('publicReason', () => {
  it("router's own errors keep their message, without paths", () => {
    expect(publicReason(new RouterError(400, 'No summarization model is configured.'))).toBe('No summarization model is configured.');
    expect(publicReason(new SecretError('secret cannot be decrypted (wrong key file or damaged value)'))).toContain('wrong key file');
    expect(publicReason(new CodecError(400, 'messages must be an array'))).toBe('messages must be an array');
    expect(publicReason(new AttemptError('openai answered 503: overloaded', 503, 'http'))).toBe('openai answered 503: overloaded');
    expect(publicReason(new RouterError(400, 'cannot read /home/alice/.router/x.json'))).toBe('cannot read <path>');
  });

  it('network, TLS and SQLite failures are named by their code, also through a cause chain', () => {
    const refused = new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5432'), { code: 'ECONNREFUSED' }) });
    expect(publicReason(refused)).toBe('the connection was refused');
    expect(publicReason(Object.assign(new Error('getaddrinfo ENOTFOUND db.internal.corp'), { code: 'ENOTFOUND' }))).toBe('the host name was not found');
    expect(publicReason(Object.assign(new Error('certificate has expired'), { code: 'CERT_HAS_EXPIRED' }))).toBe('its TLS certificate has expired');
    expect(publicReason(Object.assign(new Error('file is not a database'), { code: 'SQLITE_NOTADB' }))).toBe('the file is not a database');
    expect(publicReason(new DOMException('The operation timed out.', 'TimeoutError'))).toBe('it timed out');
  });

  it('any other exception text is replaced by the fallback', () => {
    const leaky = new Error('password authentication failed for user "alice" at postgres://alice:pw@10.0.0.5/router');
    expect(publicReason(leaky)).toBe('an unexpected error (details in the daemon log)');
    expect(publicReason(new TypeError("Cannot read properties of undefined (reading 'choices')"), 'the reply could not be read')).toBe('the reply could not be read');
    expect(publicReason('a string')).toBe('an unexpected error (details in the daemon log)');
    expect(publicReason(undefined)).toBe('an unexpected error (details in the daemon log)');
  });
});
