type Tokenizer = { encode: (text: string) => number[]; decode: (tokens: number[]) => string };

let loading: Promise<Tokenizer> | undefined;

/** gpt-tokenizer, loaded on first use (as count-tokens.ts does) so an idle daemon does not carry its tables. */
export function tokenizer(): Promise<Tokenizer> {
  loading ??= import('gpt-tokenizer').then((m) => ({ encode: m.encode, decode: m.decode }));
  return loading;
}
