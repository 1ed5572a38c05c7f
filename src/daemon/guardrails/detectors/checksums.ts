/** Luhn (mod 10) check of a digit string, as payment card numbers carry. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return false;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/** ISO 13616 IBAN lengths by country (SWIFT IBAN registry). */
const IBAN_LENGTHS: Record<string, number> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BI: 27, BR: 29, BY: 28, CH: 21, CR: 22,
  CY: 28, CZ: 24, DE: 22, DJ: 27, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18, FK: 18, FO: 18, FR: 27, GB: 22,
  GE: 22, GI: 23, GL: 18, GR: 27, GT: 28, HR: 21, HU: 28, IE: 22, IL: 23, IQ: 23, IS: 26, IT: 27, JO: 30, KW: 30,
  KZ: 20, LB: 28, LC: 32, LI: 21, LT: 20, LU: 20, LV: 21, LY: 25, MC: 27, MD: 24, ME: 22, MK: 19, MN: 20, MR: 27,
  MT: 31, MU: 30, NI: 28, NL: 18, NO: 15, OM: 23, PK: 24, PL: 28, PS: 29, PT: 25, QA: 29, RO: 24, RS: 22, RU: 33,
  SA: 24, SC: 31, SD: 18, SE: 24, SI: 19, SK: 24, SM: 27, SO: 23, ST: 25, SV: 28, TL: 23, TN: 24, TR: 26, UA: 29,
  VA: 22, VG: 24, XK: 20, YE: 30,
};

/** IBAN check: known country, its exact length, and ISO 7064 mod 97 == 1. `iban` has no spaces. */
export function ibanValid(iban: string): boolean {
  const s = iban.toUpperCase();
  if (IBAN_LENGTHS[s.slice(0, 2)] !== s.length) return false;
  const moved = s.slice(4) + s.slice(0, 4);
  let rem = 0;
  for (const ch of moved) {
    const code = ch.charCodeAt(0);
    const value = code >= 65 && code <= 90 ? code - 55 : code - 48;
    if (value < 0 || value > 35) return false;
    rem = value > 9 ? (rem * 100 + value) % 97 : (rem * 10 + value) % 97;
  }
  return rem === 1;
}

/**
 * Payment card issuer ranges (IIN prefixes) with their lengths: Visa, Mastercard (51-55, 2221-2720),
 * American Express, Discover, JCB, Diners Club, UnionPay, Maestro. A Luhn-valid number outside these is
 * far more often an id or an order number than a card.
 */
export function cardIssuer(digits: string): string | undefined {
  const n = digits.length;
  const p2 = Number(digits.slice(0, 2));
  const p3 = Number(digits.slice(0, 3));
  const p4 = Number(digits.slice(0, 4));
  const p6 = Number(digits.slice(0, 6));
  if (digits[0] === '4' && (n === 13 || n === 16 || n === 19)) return 'visa';
  if (((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) && n === 16) return 'mastercard';
  if ((p2 === 34 || p2 === 37) && n === 15) return 'amex';
  if ((p4 === 6011 || p2 === 65 || (p3 >= 644 && p3 <= 649) || (p6 >= 622126 && p6 <= 622925)) && n >= 16 && n <= 19) return 'discover';
  if (p4 >= 3528 && p4 <= 3589 && n >= 16 && n <= 19) return 'jcb';
  if (((p3 >= 300 && p3 <= 305) || p2 === 36 || p2 === 38 || p2 === 39) && n >= 14 && n <= 19) return 'diners';
  if (p2 === 62 && n >= 16 && n <= 19) return 'unionpay';
  if ((p4 === 5018 || p4 === 5020 || p4 === 5038 || p4 === 5893 || p4 === 6304 || p4 === 6759 || p4 === 6761 || p4 === 6762 || p4 === 6763) && n >= 12 && n <= 19) return 'maestro';
  return undefined;
}

/**
 * US Social Security Number validity (SSA rules): area 000, 666 and 900-999 are never issued, nor group 00
 * or serial 0000; 078-05-1120 and 219-09-9999 are famous published numbers (a wallet insert, an ad).
 */
export function ssnValid(area: string, group: string, serial: string): boolean {
  const a = Number(area);
  if (a === 0 || a === 666 || a >= 900) return false;
  if (group === '00' || serial === '0000') return false;
  const whole = `${area}${group}${serial}`;
  return whole !== '078051120' && whole !== '219099999';
}

/**
 * UK National Insurance number prefix rules (HMRC): first letter not D, F, I, Q, U, V; second not D, F, I,
 * O, Q, U, V; BG, GB, KN, NK, NT, TN and ZZ are never allocated.
 */
export function ninoPrefixValid(prefix: string): boolean {
  const p = prefix.toUpperCase();
  if (/[DFIQUV]/.test(p[0]!) || /[DFIOQUV]/.test(p[1]!)) return false;
  return !['BG', 'GB', 'KN', 'NK', 'NT', 'TN', 'ZZ'].includes(p);
}
