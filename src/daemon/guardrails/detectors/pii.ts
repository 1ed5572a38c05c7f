import type { Detector, Match } from '../types.js';
import { cardIssuer, ibanValid, luhnValid, ninoPrefixValid, ssnValid } from './checksums.js';

export const PII_KINDS = ['email', 'phone', 'card', 'iban', 'us_ssn', 'uk_nino'] as const;
export type PiiKind = (typeof PII_KINDS)[number];

// Image and asset suffixes read as a "top-level domain" in `icon@2x.png`; none is a TLD people mail to.
const FILE_SUFFIX = /^(png|jpe?g|gif|svg|webp|ico|bmp|tiff?|avif|heic|pdf|css|scss|js|mjs|cjs|ts|tsx|jsx|json|lock|md|txt|html?)$/i;
const EMAIL = /(?<![A-Za-z0-9._%+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+([A-Za-z]{2,24})(?![A-Za-z0-9-])/g;
// International numbers need the leading + (E.164: 8 to 15 digits): country code, an optional short
// (area) group, then groups of 2+ digits, so a trailing lone digit is not swallowed.
const PHONE_INTL = /(?<![\w+])\+[1-9]\d{0,3}(?:[ .-]?(?:\(\d{1,4}\)|\d{1,4}))?(?:[ .-]?\d{2,5}){1,6}(?![\w])/g;
// North American numbers: area code and exchange never start with 0 or 1; separators required.
const PHONE_NANP = /(?<![\w.+-])(?:1[ .-]?)?(?:\([2-9]\d{2}\)[ .-]?|[2-9]\d{2}[ .-])[2-9]\d{2}[ .-]\d{4}(?![\w-]|\.\d)/g;
const CARD = /(?<![\d.,-])\d(?:[ -]?\d){11,18}(?![\d-]|[.,]\d)/g;
// Either case: the length table and mod-97 checksum keep random codes out.
const IBAN = /(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]){11,30}(?![A-Za-z0-9])/g;
const SSN = /(?<![\d-])(\d{3})([- ])(\d{2})\2(\d{4})(?![\d-])/g;
// Nine bare digits are an SSN only when the text says so.
const SSN_LABELLED = /\b(?:SSN|social security (?:number|no\.?|#))\s*(?:is\b|[:#=]+)?\s*(\d{9})(?!\d)/dgi;
const NINO = /(?<![A-Za-z0-9])([A-Z]{2}) ?(\d{2}) ?(\d{2}) ?(\d{2}) ?([A-D])(?![A-Za-z0-9])/g;

const digitsOf = (s: string) => s.replace(/\D/g, '');

/**
 * The longest prefix of a separated number (`4111 1111 1111 1111 2024`) that passes `valid`, cut only at
 * separators; the regex is greedy, so a valid number followed by more digit groups is found this way.
 */
function validPrefix(text: string, valid: (compact: string) => boolean): number | undefined {
  if (valid(text.replace(/[ -]/g, ''))) return text.length;
  for (let i = text.length - 1; i > 0; i--) {
    if ((text[i] === ' ' || text[i] === '-') && valid(text.slice(0, i).replace(/[ -]/g, ''))) return i;
  }
  return undefined;
}

function scanPii(text: string, kinds: ReadonlySet<PiiKind>): Match[] {
  const out: Match[] = [];
  const add = (kind: PiiKind, start: number, end: number) => out.push({ guardrail: 'pii', kind, start, end });
  if (kinds.has('email') && text.includes('@')) {
    for (const m of text.matchAll(EMAIL)) if (!FILE_SUFFIX.test(m[1]!)) add('email', m.index, m.index + m[0].length);
  }
  if (kinds.has('phone')) {
    for (const m of text.matchAll(PHONE_INTL)) {
      const n = digitsOf(m[0]).length;
      if (n >= 8 && n <= 15) add('phone', m.index, m.index + m[0].length);
    }
    for (const m of text.matchAll(PHONE_NANP)) add('phone', m.index, m.index + m[0].length);
  }
  if (kinds.has('card')) {
    for (const m of text.matchAll(CARD)) {
      const len = validPrefix(m[0], (d) => d.length >= 12 && d.length <= 19 && luhnValid(d) && cardIssuer(d) !== undefined);
      if (len) add('card', m.index, m.index + len);
    }
  }
  if (kinds.has('iban')) {
    for (const m of text.matchAll(IBAN)) {
      const len = validPrefix(m[0], ibanValid);
      if (len) add('iban', m.index, m.index + len);
    }
  }
  if (kinds.has('us_ssn')) {
    for (const m of text.matchAll(SSN)) if (ssnValid(m[1]!, m[3]!, m[4]!)) add('us_ssn', m.index, m.index + m[0].length);
    for (const m of text.matchAll(SSN_LABELLED)) {
      const [s, e] = m.indices![1]!;
      if (ssnValid(m[1]!.slice(0, 3), m[1]!.slice(3, 5), m[1]!.slice(5))) add('us_ssn', s, e);
    }
  }
  if (kinds.has('uk_nino')) {
    for (const m of text.matchAll(NINO)) if (ninoPrefixValid(m[1]!)) add('uk_nino', m.index, m.index + m[0].length);
  }
  return out;
}

/**
 * Personal data: email addresses, phone numbers (international with +, North American), payment cards
 * (issuer range + Luhn), IBANs (country length + mod 97), US SSNs (never-issued ranges excluded) and UK
 * National Insurance numbers (HMRC prefix rules). Checksums keep ids and order numbers out.
 */
export function piiDetector(kinds: readonly PiiKind[] = PII_KINDS): Detector {
  const set = new Set(kinds);
  return { guardrail: 'pii', window: 48, scan: (text) => scanPii(text, set) };
}
