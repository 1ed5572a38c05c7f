/** Wire types of the observability routes the CLI reads too (`/api/cli-tools/logs`, `/api/evals`). */

/** A file `router config-tool` touched, and how. */
export interface CliToolFileChange {
  path: string;
  action: 'created' | 'modified' | 'restored' | 'removed';
}

/** `POST /api/cli-tools/logs`: what the CLI reports after writing (apply) or restoring (undo) a tool's settings. */
export interface CliToolChangeInput {
  tool: string;
  action: 'apply' | 'undo';
  files: CliToolFileChange[];
  /** The backup folder holding the files as they were (apply), or the one restored from (undo). */
  backup?: string | null;
  /** The API key created for the tool, when one was. */
  keyId?: string | null;
  model?: string | null;
  baseUrl?: string | null;
}

/** One recorded change (`GET /api/cli-tools/logs`). */
export interface CliToolChange extends Required<CliToolChangeInput> {
  id: number;
  /** When the daemon recorded it (ISO 8601). */
  at: string;
}
