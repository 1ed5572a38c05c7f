import { defineConfig } from 'vitest/config';

/**
 * `npm run test:clients`: the real coding agents (Claude Code, Codex CLI, Gemini CLI, opencode; Qwen Code,
 * Copilot CLI and Cline for `router setup`), installed at pinned versions into .clients/, driven against a
 * real daemon and mock upstreams. Not part of `npm test`.
 */
export default defineConfig({
  test: {
    include: ['test/clients/**/*.client.ts'],
    globalSetup: ['test/clients/install.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    testTimeout: 180_000,
    hookTimeout: 900_000,
    pool: 'forks',
    // Each agent is a heavy process tree; one file at a time keeps the run stable on small machines.
    fileParallelism: false,
  },
});
