import type { ServerResponse } from 'node:http';

/**
 * Setting usageDurability 'reply': the end of a proxied reply (the last bytes and the end of the HTTP
 * message) waits until `wait` settles, i.e. until the usage rows recorded so far are committed. `wait`
 * returns undefined when nothing is pending, and the reply ends at once. Every path that ends a reply
 * (the fast JSON path, a stream's end, an error body through h3 and srvx) calls `res.end`, which is why
 * the hold is placed there rather than in each of them. Later calls of `end` keep their order.
 */
export function holdReplyEnd(res: ServerResponse, wait: () => Promise<void> | undefined): void {
  const end = res.end;
  let held: Promise<void> | undefined;
  res.end = function heldEnd(this: ServerResponse, ...args: unknown[]): ServerResponse {
    if (!held) {
      const pending = wait();
      if (!pending) return end.apply(res, args as never);
      held = pending;
    }
    const run = () => {
      try {
        if (!res.destroyed) end.apply(res, args as never);
      } catch {
        // the client is gone: nothing left to end
      }
    };
    held = held.then(run, run);
    return res;
  } as ServerResponse['end'];
}
