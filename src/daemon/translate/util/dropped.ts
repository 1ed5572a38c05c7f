import type { IrRequest } from '../ir.js';

/**
 * Records in `request.dropped` a field the target cannot express, once. Decoders note client fields the IR
 * cannot hold; upstream encoders note IR fields their format cannot hold. The list is for logs only.
 */
export function noteDropped(request: IrRequest, what: string): void {
  const list = (request.dropped ??= []);
  if (!list.includes(what)) list.push(what);
}
