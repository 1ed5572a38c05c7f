import { afterEach, beforeEach, expect, it } from 'vitest';
import { startDaemon, startReceiver, type Receiver, type TestDaemon } from './helpers.js';

let d: TestDaemon;
let rx: Receiver;
beforeEach(async () => {
  d = await startDaemon(true);
  rx = await startReceiver();
});
afterEach(async () => {
  d?.close();
  await rx?.close();
});

// Real timing with the daemon's default policy (as booted): attempts at 0 s, +1 s, +2 s, +4 s.
it('retries a 5xx receiver after 1 s, 2 s and 4 s (real timing, default policy)', async () => {
  const { record } = d.services.webhooks.store.create({ url: rx.url, kind: 'custom', events: ['*'] });
  rx.reply({ status: 503 });
  d.services.events.emit('provider.error', { provider: 'openai', status: 503, consecutive_failures: 5, circuit_state: 'open' });
  await d.services.webhooks.idle();
  expect(rx.requests).toHaveLength(4);
  const at = rx.requests.map((r) => r.at);
  const gaps = at.slice(1).map((t, i) => t - at[i]!);
  const expected = [1000, 2000, 4000];
  gaps.forEach((gap, i) => {
    expect(gap).toBeGreaterThanOrEqual(expected[i]! - 20);
    expect(gap).toBeLessThan(expected[i]! + 400);
  });
  expect(d.services.webhooks.store.get(record.id)).toMatchObject({ failure_count: 1, last_status: 503 });
}, 20_000);
