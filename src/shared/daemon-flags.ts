/**
 * Node flags the daemon is started with (`router start`, and the benchmark harness, so it measures the
 * daemon as shipped). A 4 MB young-generation semi-space instead of V8's default of up to 16 MB: idle RSS
 * about 6 MB lower, and no loss under load (a proxy's garbage dies young; bench/compare.mjs with
 * `--b-node` measured the same or lower CPU per request). V8 reads it only at process start.
 */
export const DAEMON_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=4'];

/**
 * Environment the daemon is started with, unless the user's environment already sets the variable. glibc
 * gives every thread that allocates (the usage writer and token counter workers, libuv's pool) its own
 * malloc arena; two arenas keep freed memory reusable across them: 1,000 open streams peaked at 152 MB
 * RSS instead of 176 MB (bench e, quick). Read only at process start; ignored by other C libraries.
 */
export function daemonEnv(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return env.MALLOC_ARENA_MAX === undefined ? { MALLOC_ARENA_MAX: '2' } : {};
}
