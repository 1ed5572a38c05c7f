/** A key's override as stored: the key and its partial document (JSON, validated by the service on load). */
export interface StoredOverride {
  keyId: string;
  config: unknown;
}

/** What the guardrails keep in storage: the global document (absent until first set) and per-key overrides. */
export interface StoredGuardrails {
  config: unknown;
  overrides: StoredOverride[];
}

/**
 * The guardrails' storage port. `GuardrailService` keeps the compiled policies the request path reads in
 * memory; the port is touched by management writes and by loads (boot, and `reload()` when another cluster
 * node wrote). Implemented over SQLite and PostgreSQL by `SqlGuardrailRepository`
 * (test/guardrails/port.test.ts).
 */
export interface GuardrailRepository {
  load(): Promise<StoredGuardrails>;
  saveConfig(config: unknown, updatedAt: string): Promise<void>;
  saveOverride(keyId: string, config: unknown, updatedAt: string): Promise<void>;
  deleteOverride(keyId: string): Promise<void>;
}
