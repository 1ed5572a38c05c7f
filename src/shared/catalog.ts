/** Wire shapes of the model catalog routes (CONTRACT "Model catalog and cost"; docs/catalog.md). */

/** Prices in USD per million tokens; null where not published. */
export interface CatalogPrices {
  input: number;
  output: number;
  cacheRead: number | null;
  cacheWrite: number | null;
  reasoning: number | null;
  inputAudio: number | null;
  outputAudio: number | null;
}

/** One model of `GET /api/catalog/models`. */
export interface CatalogEntry {
  /** `<provider>/<model>`, the provider under router's id. */
  id: string;
  provider: string;
  name: string;
  contextWindow: number | null;
  maxOutputTokens: number | null;
  inputModalities: string[];
  outputModalities: string[];
  toolCall: boolean;
  reasoning: boolean;
  prices: CatalogPrices | null;
  /** `catalog` (models.dev's figures), `override` (the user's price), `provider` (a model only a provider lists). */
  source: 'catalog' | 'override' | 'provider';
}

/** The reply of `GET /api/catalog/models`. */
export interface CatalogReply {
  /** The snapshot in use: `models.dev@<date of its newest entry>`. */
  version: string;
  source: string;
  models: CatalogEntry[];
}

/** The reply of `POST /api/catalog/update`. */
export interface CatalogUpdateResult {
  updated: boolean;
  /** The version in use after the call. */
  version: string;
  previousVersion: string;
  providers: number;
  models: number;
  /** Why nothing changed (unreachable, not a catalog...), when `updated` is false. */
  reason?: string;
}
