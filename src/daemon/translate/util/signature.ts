import type { IrPart, SignatureIssuer, WireFormat } from '../ir.js';

/**
 * Opaque reasoning signatures (Anthropic thinking `signature`, Gemini `thoughtSignature`, Responses
 * `encrypted_content`) are only valid for the provider family that issued them: another family rejects
 * them (Anthropic answers 400 "Invalid signature"), so they travel back only to their issuer.
 *
 * A client of another format keeps them in its own signature field until it replays the conversation. So
 * that router can tell their issuer then, a signature handed to a client whose format is not the issuer's is
 * wrapped in an envelope: base64 of `ROUTERSIG` + JSON `{i: issuer, s: signature, r?: 1 (redacted)}`.
 * Base64 keeps it valid where clients decode the field as bytes (Gemini SDKs).
 */

const MAGIC = 'ROUTERSIG';
/** `MAGIC` is 9 bytes, so every envelope starts with its base64 form. */
const PREFIX = Buffer.from(MAGIC).toString('base64');
const ISSUERS = new Set<string>(['anthropic', 'gemini', 'openai']);

/** The family whose signatures a client format carries natively (Chat Completions: LiteLLM's Anthropic `thinking_blocks`). */
export function nativeIssuer(format: WireFormat): SignatureIssuer | undefined {
  switch (format) {
    case 'anthropic':
    case 'openai-chat':
      return 'anthropic';
    case 'gemini':
      return 'gemini';
    case 'openai-responses':
      return 'openai';
    default:
      return undefined;
  }
}

/** A signature as a client of `format` should hold it: as issued when the format is the issuer's, else wrapped. */
export function signatureForClient(format: WireFormat, issuer: SignatureIssuer | undefined, signature: string, redacted = false): string {
  if (!redacted && (issuer === undefined || issuer === nativeIssuer(format))) return signature;
  const payload = JSON.stringify({ i: issuer ?? 'anthropic', s: signature, ...(redacted ? { r: 1 } : {}) });
  return Buffer.from(MAGIC + payload).toString('base64');
}

/** A signature a client of `format` sent back: unwrapped when router wrapped it, else the format's own. */
export function signatureFromClient(format: WireFormat, value: string): { issuer?: SignatureIssuer; signature: string; redacted?: boolean } {
  if (value.startsWith(PREFIX)) {
    const text = Buffer.from(value, 'base64').toString('utf8');
    if (text.startsWith(MAGIC)) {
      try {
        const { i, s, r } = JSON.parse(text.slice(MAGIC.length)) as { i?: unknown; s?: unknown; r?: unknown };
        if (typeof i === 'string' && ISSUERS.has(i) && typeof s === 'string') {
          return { issuer: i as SignatureIssuer, signature: s, ...(r ? { redacted: true } : {}) };
        }
      } catch {
        // not an envelope after all: the client's own value
      }
    }
  }
  const issuer = nativeIssuer(format);
  return { ...(issuer ? { issuer } : {}), signature: value };
}

/**
 * A thinking part (or Anthropic redacted thinking) decoded from a signature a client sent back: an envelope
 * of redacted thinking becomes that block again.
 */
export function thinkingFromClient(format: WireFormat, text: string, value: string): IrPart {
  const { issuer, signature, redacted } = signatureFromClient(format, value);
  if (redacted) return { type: 'redacted_thinking', data: signature };
  return { type: 'thinking', text, signature, ...(issuer ? { issuer } : {}) };
}

/** Whether an upstream of family `family` may receive this signature: only its own. */
export function signedBy(part: { signature?: string; issuer?: SignatureIssuer }, family: SignatureIssuer): boolean {
  return part.signature !== undefined && part.issuer === family;
}

/** Whether a string is a signature router wrapped for a client (it must not reach any upstream as is). */
export function isWrapped(value: unknown): boolean {
  return typeof value === 'string' && value.startsWith(PREFIX);
}

const arrayOf = (v: unknown): Array<Record<string, unknown>> => (Array.isArray(v) ? v.filter((x) => x && typeof x === 'object') : []);

/**
 * Whether a client body replays a signature router wrapped (one another family issued). Such a body cannot
 * be passed through to an upstream of its own format unchanged: it goes through the IR, which sends each
 * signature only to its issuer. Reads only the fields that hold signatures.
 */
export function holdsWrappedSignature(format: WireFormat, body: Record<string, unknown>): boolean {
  switch (format) {
    case 'anthropic':
      return arrayOf(body.messages).some((m) => arrayOf(m.content).some((b) => isWrapped(b.signature)));
    case 'openai-chat':
      return arrayOf(body.messages).some((m) => arrayOf(m.thinking_blocks).some((b) => isWrapped(b.signature)));
    case 'openai-responses':
      return arrayOf(body.input).some((i) => isWrapped(i.encrypted_content));
    case 'gemini':
      return arrayOf(body.contents).some((c) => arrayOf(c.parts).some((p) => isWrapped(p.thoughtSignature)));
    default:
      return false;
  }
}
