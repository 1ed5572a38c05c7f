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

/**
 * Columns plain output may use: `COLUMNS` when set, else the terminal's width; output that is not a
 * terminal (a pipe, a file) has no limit, so scripts read one line per row.
 */
export function outputColumns(): number {
  const env = Number(process.env.COLUMNS);
  if (Number.isInteger(env) && env > 0) return env;
  const tty = process.stdout.isTTY ? process.stdout.columns : undefined;
  return tty && tty > 0 ? tty : Number.POSITIVE_INFINITY;
}

export interface TableOptions {
  /** Free-text columns that may be narrowed (their cells wrap onto continuation lines) when the table is too wide. */
  flex?: number[];
  /** Columns available; `outputColumns()` by default. */
  width?: number;
}

/** Narrowest a flexible column gets before the table gives up on columns. */
const MIN_FLEX = 12;

/**
 * Prints rows as an aligned table with a header. Columns listed in `right` are right-aligned (numbers).
 * A table wider than the output narrows its `flex` columns, widest first, wrapping their cells; when that
 * is not enough it prints each row as a record of `HEADER  value` lines instead (psql's expanded mode), so
 * nothing is cut and ids stay whole.
 */
export function table(headers: string[], rows: string[][], right: number[] = [], opts: TableOptions = {}): string {
  const width = opts.width ?? outputColumns();
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  let excess = widths.reduce((a, b) => a + b, 0) + 2 * (headers.length - 1) - width;
  const floor = (i: number) => Math.min(Math.max(headers[i]!.length, MIN_FLEX), widths[i]!);
  const flex = opts.flex ?? [];
  const floors = widths.map((_, i) => floor(i));
  while (excess > 0) {
    let widest = -1;
    for (const i of flex) if (widths[i]! > floors[i]! && (widest < 0 || widths[i]! > widths[widest]!)) widest = i;
    if (widest < 0) return records(headers, rows, width);
    widths[widest]!--;
    excess--;
  }
  const lines: string[] = [];
  for (const cells of [headers, ...rows]) {
    const wrapped = headers.map((_, i) => wrapCell(cells[i] ?? '', widths[i]!));
    const height = Math.max(...wrapped.map((w) => w.length));
    for (let l = 0; l < height; l++) {
      lines.push(wrapped.map((w, i) => (right.includes(i) ? (w[l] ?? '').padStart(widths[i]!) : (w[l] ?? '').padEnd(widths[i]!))).join('  ').trimEnd());
    }
  }
  return lines.join('\n');
}

/** Rows as records, one `HEADER  value` line per column (values wrapped to the width), a blank line between rows. */
function records(headers: string[], rows: string[][], width: number): string {
  const label = Math.max(...headers.map((h) => h.length));
  const room = Math.max(20, width - label - 2);
  return rows
    .map((r) =>
      headers
        .flatMap((h, i) => wrapCell(r[i] ?? '', room).map((part, n) => `${(n === 0 ? h : '').padEnd(label)}  ${part}`.trimEnd()))
        .join('\n'),
    )
    .join('\n\n');
}

/** A long line of prose wrapped to the output's width (between words where it can). */
export function wrapLine(text: string, width = outputColumns()): string {
  return Number.isFinite(width) ? wrapCell(text, Math.max(20, width)).join('\n') : text;
}

/** Splits a cell into lines of at most `width`, after a space, comma, dot, slash or hyphen when one is in its second half. */
function wrapCell(text: string, width: number): string[] {
  const out: string[] = [];
  let rest = text;
  while (rest.length > width) {
    const window = rest.slice(0, width + 1);
    let cut = -1;
    for (let i = window.length - 1; i >= Math.ceil(width / 2); i--) {
      if (window[i] === ' ') {
        cut = i;
        break;
      }
      if (i < width && /[,./-]/.test(window[i]!)) {
        cut = i + 1;
        break;
      }
    }
    if (cut < 0) cut = width;
    out.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).trimStart();
  }
  out.push(rest);
  return out;
}
