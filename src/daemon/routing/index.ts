/**
 * Public surface of the routing and resilience modules: pure, in-memory, clock-injectable building
 * blocks for the proxy (retry hints, error classification, breakers, cooldowns, target and account
 * ordering, latency tracking, rate limits and token budgets).
 */
export * from './accounts.js';
export * from './breaker.js';
export * from './clock.js';
export * from './cooldowns.js';
export * from './errors.js';
export * from './latency.js';
export * from './lru.js';
export * from './prng.js';
export * from './provider-error.js';
export * from './rate-limit.js';
export * from './retry-after.js';
export * from './session-affinity.js';
export * from './strategies.js';
export * from './token-budget.js';
