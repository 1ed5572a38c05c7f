import { createInterface } from 'node:readline';
import { CliError, type Io } from './io.js';

/** Reads all of stdin (for secrets piped in: `printf %s "$KEY" | router ... --api-key-stdin`). */
export async function readStdin(): Promise<string> {
  let data = '';
  for await (const chunk of process.stdin) data += chunk;
  return data.replace(/\r?\n$/, '');
}

/** Asks for a secret on the terminal without echoing it. */
export async function askHidden(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: true });
  const out = rl as unknown as { _writeToOutput: (s: string) => void };
  const write = out._writeToOutput;
  process.stdout.write(question);
  out._writeToOutput = () => {};
  try {
    return await new Promise<string>((resolve) => rl.question('', resolve));
  } finally {
    out._writeToOutput = write;
    rl.close();
    process.stdout.write('\n');
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
