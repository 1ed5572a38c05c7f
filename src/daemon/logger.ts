import { appendFile, appendFileSync, renameSync, statSync, unlinkSync } from 'node:fs';

export type Level = 'debug' | 'info' | 'warn' | 'error';

// Read once: process.env is a slow getter, and debug() is called on every proxied request.
const DEBUG = Boolean(process.env.ROUTER_DEBUG);

export interface LoggerOptions {
  file?: string;
  /** Rotate when the file passes this size (bytes). */
  maxBytes?: number;
  /** Rotated files kept: router.log.1 ... router.log.N. */
  keep?: number;
  /** Also write to stdout (foreground mode). */
  echo?: boolean;
}

/**
 * Append-only daemon log with size-capped rotation. Lines are buffered and written asynchronously in
 * batches, so logging never puts a synchronous disk write on the request path; `flushSync` is for shutdown
 * and fatal errors only.
 */
export class Logger {
  private buffer: string[] = [];
  private writing = false;
  private size = 0;
  private readonly maxBytes: number;
  private readonly keep: number;

  constructor(private readonly opts: LoggerOptions = {}) {
    this.maxBytes = opts.maxBytes ?? 5 * 1024 * 1024;
    this.keep = opts.keep ?? 3;
    if (opts.file) {
      try {
        this.size = statSync(opts.file).size;
      } catch {
        this.size = 0;
      }
    }
  }

  debug(msg: string, data?: Record<string, unknown>): void {
    if (DEBUG) this.write('debug', msg, data);
  }
  info(msg: string, data?: Record<string, unknown>): void {
    this.write('info', msg, data);
  }
  warn(msg: string, data?: Record<string, unknown>): void {
    this.write('warn', msg, data);
  }
  error(msg: string, data?: Record<string, unknown>): void {
    this.write('error', msg, data);
  }

  private write(level: Level, msg: string, data?: Record<string, unknown>): void {
    const line = `${new Date().toISOString()} ${level.toUpperCase().padEnd(5)} ${msg}${data ? ` ${safeJson(data)}` : ''}\n`;
    if (this.opts.echo) process.stdout.write(line);
    if (!this.opts.file) return;
    this.buffer.push(line);
    if (!this.writing) setImmediate(() => this.drain());
  }

  private drain(): void {
    if (this.writing || this.buffer.length === 0 || !this.opts.file) return;
    const chunk = this.buffer.join('');
    this.buffer = [];
    this.writing = true;
    appendFile(this.opts.file, chunk, { mode: 0o600 }, () => {
      this.size += Buffer.byteLength(chunk);
      this.writing = false;
      if (this.size > this.maxBytes) this.rotate();
      if (this.buffer.length) this.drain();
    });
  }

  private rotate(): void {
    const file = this.opts.file!;
    try {
      try {
        unlinkSync(`${file}.${this.keep}`);
      } catch {
        // nothing to drop yet
      }
      for (let i = this.keep - 1; i >= 1; i--) {
        try {
          renameSync(`${file}.${i}`, `${file}.${i + 1}`);
        } catch {
          // gap in the rotation chain: fine
        }
      }
      renameSync(file, `${file}.1`);
      this.size = 0;
    } catch {
      // Rotation failure must not take the daemon down; we keep appending to the current file.
    }
  }

  /** Writes everything buffered synchronously (shutdown, fatal errors). */
  flushSync(): void {
    if (!this.opts.file || this.buffer.length === 0) return;
    const chunk = this.buffer.join('');
    this.buffer = [];
    try {
      appendFileSync(this.opts.file, chunk, { mode: 0o600 });
      this.size += Buffer.byteLength(chunk);
    } catch {
      // the disk is gone; nothing more we can do
    }
  }
}

function safeJson(data: Record<string, unknown>): string {
  try {
    return JSON.stringify(data);
  } catch {
    return '{}';
  }
}
