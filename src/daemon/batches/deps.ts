import type { KeyStore } from '../keys/store.js';
import type { PipelineDeps } from '../proxy/deps.js';
import type { LineRoutes } from './line-call.js';

/**
 * What the Batch API runs on: the request pipeline (native batches call providers through the executor),
 * the keys its owners' identities are read from, and the routes local lines are sent through (the same
 * route a client calls; boot.ts hands the route table and the route context).
 */
export interface BatchDeps extends PipelineDeps {
  keys: Pick<KeyStore, 'get'>;
  routes: LineRoutes;
}
