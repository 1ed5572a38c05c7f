/**
 * A bounded FIFO ring: O(1) push, and when full the oldest item is overwritten (drop-oldest), counted so
 * the owner can report it. Draining returns everything in arrival order and empties the ring.
 */
export class BoundedQueue<T> {
  private buf: (T | undefined)[];
  private head = 0;
  private size = 0;
  /** Items overwritten because the ring was full, since construction. */
  dropped = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('capacity must be a positive integer');
    this.buf = new Array(capacity);
  }

  get length(): number {
    return this.size;
  }

  /** Adds an item; returns false when the oldest item was dropped to make room. */
  push(item: T): boolean {
    if (this.size === this.capacity) {
      this.buf[this.head] = item;
      this.head = (this.head + 1) % this.capacity;
      this.dropped++;
      return false;
    }
    this.buf[(this.head + this.size) % this.capacity] = item;
    this.size++;
    return true;
  }

  /** Removes and returns up to `max` items (every item by default), oldest first. */
  drain(max = this.size): T[] {
    const n = Math.min(max, this.size);
    const out = new Array<T>(n);
    for (let i = 0; i < n; i++) {
      const j = (this.head + i) % this.capacity;
      out[i] = this.buf[j]!;
      this.buf[j] = undefined;
    }
    this.head = (this.head + n) % this.capacity;
    this.size -= n;
    if (this.size === 0) this.head = 0;
    return out;
  }
}
