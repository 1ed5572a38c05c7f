import { CliError, type Io } from './io.js';

/** Reads all of stdin (for secrets piped in: `printf %s "$KEY" | router ... --api-key-stdin`). */
export async function readStdin(): Promise<string> {
  let data = '';
  for await (const chunk of process.stdin) data += chunk;
  return data.replace(/\r?\n$/, '');
}

/**
 * Asks for a secret on the terminal without echoing it. The label is written once and stays: stdin is read
 * in raw mode, character by character, and nothing is written back (readline would redraw, and so erase,
 * the line on every key). A pasted key arrives as one chunk and is taken whole. Enter ends the input,
 * Backspace deletes, Ctrl-C cancels (exit 130), Ctrl-D ends it; escape sequences (arrows) are ignored.
 */
export async function askHidden(question: string, input: NodeJS.ReadStream = process.stdin, output: NodeJS.WriteStream = process.stdout): Promise<string> {
  output.write(question);
  const wasRaw = input.isRaw;
  input.setRawMode?.(true);
  input.resume();
  input.setEncoding('utf8');
  try {
    return await new Promise<string>((resolve, reject) => {
      let value = '';
      const onData = (chunk: string) => {
        // Drop escape sequences (arrows, function keys) so they never land in the secret.
        const text = chunk.replace(/\x1b\[[0-9;?]*[ -\/]*[@-~]|\x1b[@-_]?/g, '');
        for (const ch of text) {
          if (ch === '\r' || ch === '\n' || ch === '\x04') return finish(() => resolve(value));
          if (ch === '\x03') return finish(() => reject(new CliError('cancelled', 130)));
          if (ch === '\x7f' || ch === '\b') value = [...value].slice(0, -1).join('');
          else if (ch >= ' ') value += ch;
        }
      };
      const finish = (settle: () => void) => {
        input.off('data', onData);
        settle();
      };
      input.on('data', onData);
    });
  } finally {
    input.setRawMode?.(wasRaw);
    input.pause();
    output.write('\n');
  }
}

/**
 * Asks "yes or no" before a change. Without a terminal there is nobody to ask: the caller must have
 * passed --yes, so this refuses with a usage error instead of hanging on stdin.
 */
export async function confirm(io: Io, question: string, yes: boolean | undefined): Promise<boolean> {
  if (yes) return true;
  if (!io.interactive || !io.ask) throw new CliError(`${question.replace(/\?\s*$/, '')}: confirmation needed; run again with --yes (no terminal to ask on)`, 2);
  const answer = (await io.ask(`${question} [y/N] `)).trim().toLowerCase();
  return answer === 'y' || answer === 'yes';
}
