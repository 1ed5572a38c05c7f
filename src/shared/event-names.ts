/**
 * Every event name router emits, in the spec's order: the daemon's event bus checks its payload map against
 * this list, and the CLI shows it in help (webhooks and the live feed filter by these names).
 */
export const EVENT_NAMES = [
  'request.completed',
  'request.failed',
  'provider.error',
  'provider.recovered',
  'quota.exceeded',
  'combo.switched',
  'batch.completed',
  'batch.failed',
  'batch.cancelled',
  'test.ping',
  'connection.refreshed',
  'connection.expired',
  'model.mismatch',
] as const;
