/**
 * Runs the CLI in-process (`runCli` with a capturing Io) against a real daemon: the same code path as
 * bin/router.js, minus a node start-up per command, so a file can run dozens of commands quickly. Tests
 * that need a real process (stdin, signals, exit codes, a terminal) use test/support/cli.ts instead.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../src/cli/index.js';
import { resetCliConfigCache } from '../../src/cli/config.js';
import type { Io } from '../../src/cli/io.js';

export interface Run {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Pretend a person is at a terminal; `answers` are what they type at prompts. */
  interactive?: boolean;
  answers?: string[];
}

/** Points the CLI config at an empty temp folder, so a developer's own preferences never leak in. */
export function isolateCliConfig(): string {
  const dir = mkdtempSync(join(tmpdir(), 'router-cli-config-'));
  process.env.ROUTER_CLI_CONFIG_DIR = dir;
  resetCliConfigCache();
  return dir;
}

export async function run(argv: string[], opts: RunOptions = {}): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const answers = [...(opts.answers ?? [])];
  const io: Io = {
    out: (t) => (stdout += t.endsWith('\n') ? t : `${t}\n`),
    err: (t) => (stderr += t.endsWith('\n') ? t : `${t}\n`),
    interactive: opts.interactive ?? false,
    ask: async (q) => {
      stdout += q;
      return answers.shift() ?? '';
    },
  };
  const exitCode = await runCli(argv, io);
  return { exitCode, stdout, stderr };
}

export const show = (r: Run) => `exit ${r.exitCode}\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}`;

/** Parses the stdout of a --json run, failing with both streams when it is not JSON. */
export function json<T = any>(r: Run): T {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`not JSON:\n${show(r)}`);
  }
}
