/** Output streams of the CLI, injectable so tests capture what a command prints. */
export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  /** True when a person is at a terminal (stdin and stdout are TTYs): TUIs and prompts are allowed. */
  interactive?: boolean;
  /** Asks a question on the terminal and resolves with the answer line. */
  ask?: (question: string) => Promise<string>;
}

export const processIo: Io = {
  out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
  get interactive() {
    return Boolean(process.stdout.isTTY && process.stdin.isTTY);
  },
  ask: async (question) => {
    const { createInterface } = await import('node:readline');
    const rl = createInterface({ input: process.stdin, output: process.stdout });
    try {
      return await new Promise<string>((resolve) => rl.question(question, resolve));
    } finally {
      rl.close();
    }
  },
};

/** An error the CLI reports as one line (no stack trace) and turns into an exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
    readonly detail?: string,
    /** The daemon's HTTP status, when the error is its reply. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Prints rows as an aligned table with a header. Columns listed in `right` are right-aligned (numbers). */
export function table(headers: string[], rows: string[][], right: number[] = []): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const cell = (c: string, i: number) => (right.includes(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!));
  const line = (cells: string[]) => cells.map(cell).join('  ').trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}
