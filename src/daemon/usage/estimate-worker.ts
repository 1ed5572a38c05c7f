/**
 * Worker thread that counts tokens with gpt-tokenizer, so loading its tables (about half a second) and
 * counting big prompts never block the daemon's event loop. Protocol: `{id, texts}` in, `{id, counts}` out.
 */
import { parentPort } from 'node:worker_threads';
import { countTokens } from 'gpt-tokenizer';
import { countText } from './token-count.js';

parentPort?.on('message', (msg: { id: number; texts: string[] }) => {
  let counts: number[];
  try {
    counts = msg.texts.map((t) => countText(t, countTokens));
  } catch {
    counts = msg.texts.map((t) => Math.ceil(t.length / 4));
  }
  parentPort!.postMessage({ id: msg.id, counts });
});
