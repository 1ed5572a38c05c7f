import { strToU8, zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { extractZip, type ZipLimits } from '../../src/daemon/archive/unzip.js';
import { RouterError } from '../../src/daemon/http/errors.js';

const LIMITS: ZipLimits = { maxBytes: 1_000_000, maxEntries: 10, maxEntryBytes: 200_000 };

/** Offset of the central-directory header of the first entry. */
function centralOffset(zip: Uint8Array): number {
  const view = Buffer.from(zip);
  const end = view.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  return view.readUInt32LE(end + 16);
}

function refusal(zip: Uint8Array, limits: ZipLimits = LIMITS): RouterError {
  try {
    extractZip(zip, limits);
  } catch (error) {
    expect(error).toBeInstanceOf(RouterError);
    return error as RouterError;
  }
  throw new Error('extractZip accepted the archive');
}

describe('extractZip', () => {
  it('returns the files of a well-formed archive (deflated and stored), skipping directories', () => {
    const zip = zipSync({
      'a.json': strToU8('{"a":1}'),
      'dir/': new Uint8Array(0),
      'dir/b.json': [strToU8('{"b":2}'), { level: 0 }],
      './c.txt': strToU8('x'.repeat(5000)),
    });
    const entries = extractZip(zip, LIMITS);
    expect(entries.map((entry) => entry.path)).toEqual(['a.json', 'dir/b.json', 'c.txt']);
    expect(Buffer.from(entries[1]?.data ?? []).toString()).toBe('{"b":2}');
    expect(entries[2]?.data.length).toBe(5000);
  });

  it.each([
    ['../evil.json', '".." is not allowed'],
    ['a/../../evil.json', '".." is not allowed'],
    ['/etc/passwd', 'absolute paths'],
    ['C:/Windows/evil.json', 'drive letters'],
    ['a\\..\\evil.json', 'backslashes'],
  ])('refuses the zip-slip path %s', (name, why) => {
    const error = refusal(zipSync({ [name]: strToU8('{}') }));
    expect(error.status).toBe(400);
    expect(error.code).toBe('invalid_archive');
    expect(error.message).toContain(why);
  });

  it('refuses symbolic links', () => {
    const zip = zipSync({ link: [strToU8('/etc/passwd'), { os: 3, attrs: (0o120777 << 16) >>> 0 }] });
    expect(refusal(zip).message).toContain('symbolic links');
  });

  it('refuses encrypted entries', () => {
    const zip = zipSync({ 'a.json': strToU8('{}') });
    const at = centralOffset(zip);
    const view = Buffer.from(zip);
    view.writeUInt16LE(view.readUInt16LE(at + 8) | 1, at + 8);
    expect(refusal(view).message).toContain('encrypted');
  });

  it('refuses more entries than allowed', () => {
    const files: Record<string, Uint8Array> = {};
    for (let i = 0; i < 11; i++) files[`f${i}.json`] = strToU8('{}');
    expect(refusal(zipSync(files)).message).toContain('11 entries');
  });

  it('refuses an entry over the per-entry limit, and a total over the archive limit', () => {
    const big = zipSync({ 'big.txt': strToU8('y'.repeat(200_001)) });
    expect(refusal(big).message).toContain('expands beyond 200000 bytes');
    const files: Record<string, Uint8Array> = {};
    for (let i = 0; i < 6; i++) files[`f${i}.txt`] = strToU8(String(i).repeat(190_000));
    expect(refusal(zipSync(files)).message).toContain('total size');
  });

  it('refuses a zip bomb whose headers understate its size, while inflating', () => {
    const zip = zipSync({ 'bomb.txt': [new Uint8Array(50_000_000), { level: 9 }] });
    expect(zip.length).toBeLessThan(100_000);
    const view = Buffer.from(zip);
    const at = centralOffset(view);
    view.writeUInt32LE(100, at + 24); // claimed uncompressed size: 100 bytes
    const started = process.memoryUsage().rss;
    expect(refusal(view).message).toContain('expands beyond');
    // Stopped near the limit: nowhere near 50 MB was materialized.
    expect(process.memoryUsage().rss - started).toBeLessThan(40_000_000);
  });

  it('refuses garbage, truncated data and bad checksums', () => {
    expect(refusal(strToU8('not a zip at all, just some text')).message).toContain('Not a zip');
    const zip = Buffer.from(zipSync({ 'a.json': strToU8('{"a":1}') }));
    const at = centralOffset(zip);
    zip.writeUInt32LE((zip.readUInt32LE(at + 16) ^ 1) >>> 0, at + 16);
    expect(refusal(zip).message).toContain('checksum');
  });
});
