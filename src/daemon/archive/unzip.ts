/**
 * Safe extraction of an uploaded zip archive held in memory. Nothing touches the disk: the caller gets
 * `{path, data}` entries and decides what to keep. Every limit is enforced against the bytes actually
 * produced while inflating (headers lie in zip bombs), and anything that could escape a target folder
 * (zip-slip, symlinks) or that we cannot verify (encryption, unknown compression, zip64) is refused with
 * a 400 rather than skipped, so a user sees why their archive was rejected.
 */

import { crc32 } from 'node:zlib';
import { Inflate } from 'fflate';
import { RouterError } from '../http/errors.js';

/** One extracted file. */
export interface ZipEntry {
  /** Normalized relative path with `/` separators (never absolute, never containing `..`). */
  path: string;
  data: Uint8Array;
}

/** Limits for {@link extractZip}; all required so every caller chooses them deliberately. */
export interface ZipLimits {
  /** Total uncompressed bytes across all entries. */
  maxBytes: number;
  /** Number of entries (directories included). */
  maxEntries: number;
  /** Uncompressed bytes of any one entry. */
  maxEntryBytes: number;
}

const EOCD_SIG = 0x06054b50;
const CEN_SIG = 0x02014b50;
const LOC_SIG = 0x04034b50;
/** Compressed input is fed to the inflater in slices this big, so one step can expand at most ~1 MB. */
const INFLATE_SLICE = 1024;
const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

function refuse(message: string): never {
  throw new RouterError(400, message, { code: 'invalid_archive' });
}

interface CentralEntry {
  name: string;
  flags: number;
  method: number;
  crc: number;
  compressedSize: number;
  size: number;
  localOffset: number;
  madeBy: number;
  externalAttrs: number;
}

/** Finds the end-of-central-directory record (it sits in the last 64 KiB + 22 bytes). */
function findEndRecord(buf: Buffer): number {
  const stop = Math.max(0, buf.length - 22 - 0xffff);
  for (let i = buf.length - 22; i >= stop; i--) {
    if (buf.readUInt32LE(i) === EOCD_SIG) return i;
  }
  return refuse('Not a zip archive (no end-of-central-directory record).');
}

function readCentralDirectory(buf: Buffer, limits: ZipLimits): CentralEntry[] {
  const end = findEndRecord(buf);
  const count = buf.readUInt16LE(end + 10);
  const dirOffset = buf.readUInt32LE(end + 16);
  if (count === 0xffff || dirOffset === 0xffffffff) refuse('Zip64 archives are not supported.');
  if (count > limits.maxEntries) refuse(`The archive has ${count} entries; at most ${limits.maxEntries} are allowed.`);
  const entries: CentralEntry[] = [];
  let at = dirOffset;
  for (let i = 0; i < count; i++) {
    if (at + 46 > buf.length || buf.readUInt32LE(at) !== CEN_SIG) refuse('Corrupt zip central directory.');
    const nameLength = buf.readUInt16LE(at + 28);
    const extraLength = buf.readUInt16LE(at + 30);
    const commentLength = buf.readUInt16LE(at + 32);
    entries.push({
      madeBy: buf.readUInt16LE(at + 4),
      flags: buf.readUInt16LE(at + 8),
      method: buf.readUInt16LE(at + 10),
      crc: buf.readUInt32LE(at + 16),
      compressedSize: buf.readUInt32LE(at + 20),
      size: buf.readUInt32LE(at + 24),
      externalAttrs: buf.readUInt32LE(at + 38),
      localOffset: buf.readUInt32LE(at + 42),
      name: buf.toString('utf8', at + 46, at + 46 + nameLength),
    });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/** The entry name as a safe relative path, or a 400 for anything that could leave the target folder. */
function safePath(name: string): string {
  if (name.includes('\\')) refuse(`Refused archive entry "${name}": backslashes are not allowed in paths.`);
  if (name.includes('\0')) refuse('Refused archive entry with a NUL byte in its name.');
  if (name.startsWith('/')) refuse(`Refused archive entry "${name}": absolute paths are not allowed.`);
  if (/^[a-zA-Z]:/.test(name)) refuse(`Refused archive entry "${name}": drive letters are not allowed.`);
  const parts = name.split('/').filter((part) => part !== '' && part !== '.');
  if (parts.includes('..')) refuse(`Refused archive entry "${name}": ".." is not allowed in paths.`);
  if (parts.length === 0) refuse('Refused archive entry with an empty name.');
  return parts.join('/');
}

function isSymlink(entry: CentralEntry): boolean {
  const host = entry.madeBy >> 8;
  // Unix (3) and macOS (19) hosts keep the file mode in the high 16 bits of the external attributes.
  return (host === 3 || host === 19) && ((entry.externalAttrs >>> 16) & S_IFMT) === S_IFLNK;
}

/** The entry's compressed bytes, located through its local header (whose own lengths may differ). */
function compressedData(buf: Buffer, entry: CentralEntry): Buffer {
  const at = entry.localOffset;
  if (at + 30 > buf.length || buf.readUInt32LE(at) !== LOC_SIG) refuse(`Corrupt zip entry "${entry.name}".`);
  const start = at + 30 + buf.readUInt16LE(at + 26) + buf.readUInt16LE(at + 28);
  const stop = start + entry.compressedSize;
  if (stop > buf.length) refuse(`Corrupt zip entry "${entry.name}" (truncated).`);
  return buf.subarray(start, stop);
}

/** Inflates one entry, counting produced bytes as they come and stopping at the first byte over a limit. */
function inflateEntry(name: string, input: Buffer, entryLimit: number, budget: number): Uint8Array {
  const limit = Math.min(entryLimit, budget);
  const chunks: Uint8Array[] = [];
  let produced = 0;
  let done = false;
  const inflater = new Inflate((chunk, final) => {
    produced += chunk.length;
    if (produced > limit) tooLarge(name, entryLimit, budget);
    chunks.push(chunk);
    if (final) done = true;
  });
  try {
    for (let at = 0; at < input.length; at += INFLATE_SLICE) {
      const end = Math.min(at + INFLATE_SLICE, input.length);
      inflater.push(input.subarray(at, end), end === input.length);
    }
    if (input.length === 0) inflater.push(new Uint8Array(0), true);
  } catch (error) {
    if (error instanceof RouterError) throw error;
    refuse(`Corrupt compressed data in archive entry "${name}".`);
  }
  if (!done) refuse(`Corrupt compressed data in archive entry "${name}" (truncated).`);
  return Buffer.concat(chunks);
}

function tooLarge(name: string, entryLimit: number, budget: number): never {
  if (budget < entryLimit) refuse('The archive expands beyond the allowed total size.');
  return refuse(`Archive entry "${name}" expands beyond ${entryLimit} bytes.`);
}

/**
 * Extracts every file of a zip archive in memory, or throws a 400 RouterError (code `invalid_archive`)
 * naming the first problem: zip-slip paths, symlinks, encrypted entries, too many entries, an entry or
 * total over its uncompressed limit (measured while inflating), or two entries for one file (the same
 * path after normalizing, `a.md` and `./a.md`, or differing only in case, which a case-insensitive disk
 * would merge; or a file where another entry needs a folder). Directory entries are not returned.
 */
export function extractZip(input: Uint8Array, limits: ZipLimits): ZipEntry[] {
  const buf = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  if (buf.length < 22) refuse('Not a zip archive.');
  const entries = readCentralDirectory(buf, limits);
  const out: ZipEntry[] = [];
  const seen = new Set<string>();
  let total = 0;
  for (const entry of entries) {
    const path = safePath(entry.name);
    if (entry.flags & 0x1) refuse(`Refused archive entry "${path}": encrypted entries are not supported.`);
    if (isSymlink(entry)) refuse(`Refused archive entry "${path}": symbolic links are not allowed.`);
    if (entry.name.endsWith('/')) continue;
    const folded = path.toLowerCase();
    if (seen.has(folded)) refuse(`Refused archive: it holds "${path}" more than once.`);
    seen.add(folded);
    if (entry.size > limits.maxEntryBytes) tooLarge(path, limits.maxEntryBytes, Number.POSITIVE_INFINITY);
    const raw = compressedData(buf, entry);
    let data: Uint8Array;
    if (entry.method === 0) {
      if (raw.length > Math.min(limits.maxEntryBytes, limits.maxBytes - total)) {
        tooLarge(path, limits.maxEntryBytes, limits.maxBytes - total);
      }
      data = raw;
    } else if (entry.method === 8) {
      data = inflateEntry(path, raw, limits.maxEntryBytes, limits.maxBytes - total);
    } else {
      refuse(`Refused archive entry "${path}": compression method ${entry.method} is not supported.`);
    }
    if (crc32(data) >>> 0 !== entry.crc) refuse(`Archive entry "${path}" fails its checksum.`);
    total += data.length;
    out.push({ path, data });
  }
  for (const name of seen) {
    for (let slash = name.indexOf('/'); slash !== -1; slash = name.indexOf('/', slash + 1)) {
      if (seen.has(name.slice(0, slash))) refuse(`Refused archive: "${name.slice(0, slash)}" is both a file and a folder.`);
    }
  }
  return out;
}
