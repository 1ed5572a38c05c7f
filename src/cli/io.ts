/** Output streams of the CLI, injectable so tests capture what a command prints. */
export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
}

export const processIo: Io = {
  out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
  err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
};

/** An error the CLI reports as one line (no stack trace) and turns into an exit code. */
export class CliError extends Error {
  constructor(message: string, readonly exitCode = 1, readonly detail?: string) {
    super(message);
    this.name = 'CliError';
  }
}

/** Prints rows as an aligned table with a header. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}
