/**
 * Node flags the daemon is started with (`router start`, and the benchmark harness, so it measures the
 * daemon as shipped). A 4 MB young-generation semi-space instead of V8's default of up to 16 MB: idle RSS
 * about 6 MB lower, and no loss under load (a proxy's garbage dies young; bench/compare.mjs with
 * `--b-node` measured the same or lower CPU per request). V8 reads it only at process start.
 */
export const DAEMON_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=4'];
