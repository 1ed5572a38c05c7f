import { randomBytes } from 'node:crypto';
import type { EncodeOptions } from '../codec.js';
import type { IrRequest } from '../ir.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A random id with the given prefix (`chatcmpl-`, `msg_`, `call_`...), 24 base62 characters long. */
export function randomId(prefix: string): string {
  const bytes = randomBytes(24);
  let out = prefix;
  // 256 % 62 leaves a small bias; ids only need to be unique, not uniformly distributed.
  for (const b of bytes) out += ALPHABET[b % ALPHABET.length];
  return out;
}

/** The id generator to use: the caller's (deterministic in tests) or a random one. */
export function idFactory(options?: EncodeOptions): (prefix: string) => string {
  return options?.newId ?? randomId;
}

/** The current time in Unix seconds, from the caller's clock when one is given. */
export function nowSeconds(options?: EncodeOptions): number {
  return options?.now ? options.now() : Math.floor(Date.now() / 1000);
}

/**
 * The model a reply names: the one the upstream reported, else (an upstream that leaves it out) the model
 * the request was sent for, as streams do; never an empty string.
 */
export function replyModel(reported: string | undefined, request: IrRequest): string {
  return reported || request.model;
}
