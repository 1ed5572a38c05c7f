import { RouterError } from '../http/errors.js';

/**
 * Slows guessing of a password: at most `max` failures per `windowMs` per bucket (a caller's address, and
 * for logins the kind of client); past it every attempt of that bucket is a 429 with Retry-After until the
 * window ends, whatever it presents. Memory is bounded: past 10,000 buckets the table starts over.
 */
export class FailureThrottle {
  private readonly failures = new Map<string, { count: number; since: number }>();

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
    private readonly message: string,
  ) {}

  /** Throws the 429 when `bucket` is locked out. */
  check(bucket: string): void {
    const f = this.failures.get(bucket);
    if (!f) return;
    const elapsed = Date.now() - f.since;
    if (elapsed > this.windowMs) {
      this.failures.delete(bucket);
      return;
    }
    if (f.count >= this.max) {
      const retry = Math.max(1, Math.ceil((this.windowMs - elapsed) / 1000));
      throw new RouterError(429, this.message, { headers: { 'Retry-After': String(retry) } });
    }
  }

  fail(bucket: string): void {
    const f = this.failures.get(bucket);
    if (f) f.count++;
    else {
      if (this.failures.size > 10_000) this.failures.clear();
      this.failures.set(bucket, { count: 1, since: Date.now() });
    }
  }

  succeed(bucket: string): void {
    this.failures.delete(bucket);
  }
}
