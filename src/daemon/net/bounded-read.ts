/** A fetch reply's body passed the size its reader accepts. */
export class BodyTooLargeError extends Error {
  readonly code = 'ROUTER_REPLY_TOO_LARGE';
  constructor(readonly limit: number) {
    super(`the reply exceeds ${limit} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

/**
 * The text of a `fetch` reply, read up to `limit` bytes: one byte more cancels the body and rejects with
 * BodyTooLargeError. For the daemon's own calls to other servers (a local model server's list, an external
 * vector store), whose replies must not be able to grow its memory without end.
 */
export async function boundedText(res: Response, limit: number): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw new BodyTooLargeError(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}
