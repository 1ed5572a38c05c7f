import type { EventBus } from '../events/bus.js';
import { sameModel } from '../routing/served-model.js';
import type { UsageRecord } from './record.js';

/**
 * The events of a served request's row: `request.completed`, and `model.mismatch` when the upstream named a
 * model of another family than the one asked for. Each is built only when someone listens.
 */
export function emitServed(events: EventBus, rec: UsageRecord, publicModel: string): void {
  if (events.hasListeners('request.completed')) {
    events.emit('request.completed', {
      trace_id: rec.traceId,
      api_key_id: rec.apiKeyId,
      provider: rec.provider,
      model: publicModel,
      status: rec.status,
      tokens_in: rec.tokensIn,
      tokens_out: rec.tokensOut,
      cost_usd: rec.costUsd,
      cost_source: rec.costSource,
      price_version: rec.priceVersion,
    });
  }
  if (rec.servedModel && !sameModel(rec.model, rec.servedModel) && events.hasListeners('model.mismatch')) {
    events.emit('model.mismatch', {
      trace_id: rec.traceId,
      api_key_id: rec.apiKeyId,
      provider: rec.provider,
      connection_id: rec.connectionId,
      combo: rec.combo,
      requested_model: rec.requestedModel,
      model: rec.model,
      served_model: rec.servedModel,
    });
  }
}
