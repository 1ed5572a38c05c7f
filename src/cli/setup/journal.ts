/**
 * What each `router setup` run changed, kept in the state folder (`setup/runs.json`, 0600): the backup
 * entries of the agent settings it wrote and the keys it created. `router setup --undo` restores the newest
 * run's files byte for byte (through the same backups `router config-tool --undo` uses) and removes its keys.
 * A run that changed nothing records nothing.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeAtomic } from '../../shared/agent-tools/backup.js';

export interface SetupRun {
  at: string;
  agents: Array<{ id: string; backupDir: string; keyId: string | null }>;
  /** Connections the run created (they stay on undo: they are copies of your own credentials). */
  connections: string[];
}

const file = (stateHome: string) => join(stateHome, 'setup', 'runs.json');

export function readRuns(stateHome: string): SetupRun[] {
  try {
    const runs = JSON.parse(readFileSync(file(stateHome), 'utf8')) as unknown;
    return Array.isArray(runs) ? (runs as SetupRun[]) : [];
  } catch {
    return [];
  }
}

export function writeRuns(stateHome: string, runs: SetupRun[]): void {
  mkdirSync(join(stateHome, 'setup'), { recursive: true, mode: 0o700 });
  writeAtomic(file(stateHome), `${JSON.stringify(runs, null, 2)}\n`, 0o600);
}
