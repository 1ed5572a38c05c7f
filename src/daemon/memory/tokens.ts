/**
 * Token counts of memories with a real tokenizer (gpt-tokenizer, o200k). Its tables take about half a
 * second to load, so the module is imported on first use (the engine starts that load at boot).
 */
type CountFn = (text: string) => number;

let loading: Promise<CountFn> | undefined;
let count: CountFn | undefined;

/** Starts loading the tokenizer; resolves once it can count. */
export function loadTokenizer(): Promise<CountFn> {
  loading ??= import('gpt-tokenizer').then((m) => {
    count = m.countTokens as CountFn;
    return count;
  });
  return loading;
}

/** Token count of a text. */
export async function countTokens(text: string): Promise<number> {
  const fn = count ?? (await loadTokenizer());
  return text ? fn(text) : 0;
}

/** The text a memory spends in a prompt (and the one it is embedded as): `key: content`. */
export function memoryText(key: string, content: string): string {
  return `${key}: ${content}`;
}
