import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CliError } from './io.js';

/** Preferences of the CLI itself (not the daemon's settings): defaults for every command. */
export interface CliConfig {
  /** Default state folder, below `--home` and `ROUTER_HOME`. */
  home?: string;
  /** Default daemon address, below `--host` and `ROUTER_HOST`. */
  host?: string;
  /** Default daemon port, below `--port` and `ROUTER_PORT`. */
  port?: number;
  /** `json` makes data commands print JSON as if `--json` were given. */
  output?: 'table' | 'json';
  /** `never` turns colours off in the TUIs (NO_COLOR does too). */
  color?: 'auto' | 'never';
}

/** What `router config set` accepts, with a one-line description and a parser that validates. */
export const CONFIG_KEYS: Record<keyof CliConfig, { describe: string; parse: (raw: string) => unknown }> = {
  home: { describe: 'default state folder (below --home and ROUTER_HOME)', parse: (v) => nonEmpty('home', v) },
  host: { describe: 'default daemon address (below --host and ROUTER_HOST)', parse: (v) => nonEmpty('host', v) },
  port: {
    describe: 'default daemon port (below --port and ROUTER_PORT)',
    parse: (v) => {
      const n = Number(v);
      if (!/^\d+$/.test(v) || n < 1 || n > 65535) throw new CliError(`port must be a whole number from 1 to 65535, got '${v}'`, 2);
      return n;
    },
  },
  output: { describe: "default output of data commands: 'table' or 'json'", parse: (v) => oneOf('output', v, ['table', 'json']) },
  color: { describe: "colours in the TUIs: 'auto' or 'never'", parse: (v) => oneOf('color', v, ['auto', 'never']) },
};

function nonEmpty(key: string, v: string): string {
  if (!v.trim()) throw new CliError(`${key} must not be empty`, 2);
  return v;
}

function oneOf(key: string, v: string, allowed: string[]): string {
  if (!allowed.includes(v)) throw new CliError(`${key} must be one of ${allowed.join(', ')}; got '${v}'`, 2);
  return v;
}

/** The folder of the CLI config: `ROUTER_CLI_CONFIG_DIR` > `$XDG_CONFIG_HOME/router` > `~/.config/router`. */
export function cliConfigDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.ROUTER_CLI_CONFIG_DIR || join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'router');
}

/** The config file (`router config set` writes it through conf; every command reads it here). */
export function cliConfigFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(cliConfigDir(env), 'cli.json');
}

let cached: { file: string; config: CliConfig } | undefined;

/**
 * Reads the CLI config with plain fs: every command runs this, and conf (with its schema validator) costs
 * more start-up time than `router status` can spare. A missing or unreadable file means "no preferences";
 * values of the wrong type are ignored rather than trusted.
 */
export function readCliConfig(env: NodeJS.ProcessEnv = process.env): CliConfig {
  const file = cliConfigFile(env);
  if (cached?.file === file) return cached.config;
  let raw: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) raw = parsed as Record<string, unknown>;
  } catch {
    // no config yet, or not JSON: defaults apply
  }
  const config: CliConfig = {};
  if (typeof raw.home === 'string' && raw.home) config.home = raw.home;
  if (typeof raw.host === 'string' && raw.host) config.host = raw.host;
  if (Number.isInteger(raw.port) && (raw.port as number) > 0 && (raw.port as number) < 65536) config.port = raw.port as number;
  if (raw.output === 'json' || raw.output === 'table') config.output = raw.output;
  if (raw.color === 'auto' || raw.color === 'never') config.color = raw.color;
  cached = { file, config };
  return config;
}

/** Forgets the cached read (after `router config set`, and between in-process tests). */
export function resetCliConfigCache(): void {
  cached = undefined;
}
