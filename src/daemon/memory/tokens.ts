/**
 * Token counts of memories with a real tokenizer (gpt-tokenizer, o200k). Its tables take about half a
 * second to load, so the module is imported on first use (the engine starts that load at boot).
 */
import { tokenizer, tokenizerIfLoaded } from '../tokenizer.js';

/** Token count of a text. */
export async function countTokens(text: string): Promise<number> {
  const t = tokenizerIfLoaded() ?? (await tokenizer());
  return text ? t.countTokens(text) : 0;
}

/** The text a memory spends in a prompt (and the one it is embedded as): `key: content`. */
export function memoryText(key: string, content: string): string {
  return `${key}: ${content}`;
}
