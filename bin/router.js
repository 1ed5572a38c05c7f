#!/usr/bin/env node
// Tiny launcher: runs the built CLI (npm ci builds dist/ through the prepare script).
import { runCli } from '../dist/cli/index.js';

runCli(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`router: ${err?.message ?? err}\n`);
    process.exitCode = 1;
  },
);
